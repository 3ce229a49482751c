/* The analysis library's version string; the analyzers proper live in their own files
 * (replay.c, summary.c, ...), each a pure function over a trace (engine/trace.h). */
const char *mp_analysis_version(void);

const char *mp_analysis_version(void)
{
    return "1";
}
