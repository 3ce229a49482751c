/* The one-dimensional discrete Fourier transform the signal kernels share (defined in fft.c):
 * RFFT2D's rows and columns, and AudioSpectrogram's frames (audio.c). */
#ifndef MP_FFT_H
#define MP_FFT_H

#include <stdbool.h>
#include <stddef.h>

/* n > 0 and a power of two. */
bool mp_fft_pow2(size_t n);

/* tw[k] = exp(-2 pi i k / n), k < n, interleaved (re, im): 2 n doubles. */
void mp_fft_twiddles(double *tw, size_t n);

/* In place: z (n complex, interleaved) becomes its DFT, Z[k] = sum_j z[j] exp(-2 pi i jk/n).
 * tw: mp_fft_twiddles(n). A power of two runs as a radix-2 FFT (tmp unused, may be NULL);
 * another length as a direct DFT of n^2 steps into tmp (n complex), the caller bounding n. */
void mp_fft_1d(double *z, size_t n, const double *tw, double *tmp);

#endif
