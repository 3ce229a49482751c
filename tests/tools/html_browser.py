#!/usr/bin/python3
"""The HTML report in a real browser (tests/cli/test_html_browser.sh): loads a report from its
file in Debian's chromium-headless-shell through chromedriver (Selenium), checks that it loads
with no console error and no network request, then zooms the timeline by a drag, hovers it,
clicks a tensor, searches, toggles a kind and resets the zoom, each time checking what the page
then shows (the detail panel's text, the highlighted elements, the axis range), and saves
screenshots in the artifact folder given. Prints one line per check and the timings; exits 1
when a check fails, 2 when the browser cannot be started.

Usage: html_browser.py report|diff FILE.html ARTIFACT_DIR NAME [--search TEXT]
"""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

CHROME = "/usr/bin/chromium-headless-shell"
DRIVER = "/usr/bin/chromedriver"

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)
    return ok


def start():
    # No --user-data-dir: with --headless it leaves chromedriver no page to attach to
    # ("unable to discover open pages"); chromedriver makes its own profile under $TMPDIR.
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROME
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--force-device-scale-factor=1", "--no-first-run",
              "--disable-extensions"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER, log_path=os.devnull), options=opts)


def console_errors(d):
    return [e for e in d.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]


def js(d, script, *args):
    return d.execute_script(script, *args)


def drag(d, el, x0_frac, x1_frac, shift=False):
    """Drag across el from x0_frac to x1_frac of its width, at half its height."""
    w = el.size["width"]
    a = ActionChains(d)
    if shift:
        a.key_down(Keys.SHIFT)
    a.move_to_element_with_offset(el, int(w * (x0_frac - 0.5)), 0).click_and_hold()
    steps = 6
    for _ in range(steps):
        a.move_by_offset(int(w * (x1_frac - x0_frac) / steps), 0)
    a.release()
    if shift:
        a.key_up(Keys.SHIFT)
    a.perform()


def attr(el, name):
    return el.get_attribute(name)


def detail_text(d):
    return js(d, "var e = document.getElementById('detail'); return e.hidden ? '' : e.innerText;")


def load(d, path, art, name):
    t0 = time.time()
    d.get("file://" + os.path.abspath(path))
    WebDriverWait(d, 20).until(
        lambda x: js(x, "return document.documentElement.getAttribute('data-ready')") == "true")
    wall = (time.time() - t0) * 1000
    ready = js(d, "return window.mpReport.readyMs")
    nav = js(d, "var n = performance.getEntriesByType('navigation')[0];"
                "return n ? n.domContentLoadedEventEnd : 0;")
    print("timing load: %.0f ms to the charts drawn (DOMContentLoaded %.0f ms; %.0f ms wall "
          "clock through WebDriver); file %d bytes" % (ready, nav, wall, os.path.getsize(path)))
    errs = console_errors(d)
    check(not errs, "%s: no console error on load%s" % (name, "" if not errs else ": %s" % errs[:3]))
    res = js(d, "return performance.getEntriesByType('resource').map(function (r) {"
                "return r.name; });")
    check(not res, "%s: no request beyond the file itself%s" % (name, "" if not res else ": %s" % res[:3]))
    d.save_screenshot(os.path.join(art, name + "-loaded.png"))
    return ready


def timeline_zoom(d, host, art, name):
    over = host.find_element(By.CSS_SELECTOR, "canvas.over")
    s0, s1 = int(attr(host, "data-s0")), int(attr(host, "data-s1"))
    check(attr(host, "data-zoomed") == "false" and s1 > s0,
          "%s: timeline starts whole (steps %d to %d)" % (name, s0, s1))
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", host)
    drag(d, over, 0.40, 0.55)
    z0, z1 = int(attr(host, "data-s0")), int(attr(host, "data-s1"))
    rng = host.find_element(By.CSS_SELECTOR, ".tl-range").text
    ms = js(d, "return window.mpReport.drawMs")
    print("timing zoom: %.1f ms to redraw the timeline" % ms)
    check(attr(host, "data-zoomed") == "true" and s0 <= z0 < z1 <= s1 and (z1 - z0) < (s1 - s0) * 0.5,
          "%s: drag zooms the timeline to steps %d to %d (%s)" % (name, z0, z1, rng))
    check("(zoomed)" in rng, "%s: the range line says zoomed" % name)
    # pan: shift-drag to the left moves the window right
    u0 = float(attr(host, "data-u0"))
    drag(d, over, 0.6, 0.5, shift=True)
    check(float(attr(host, "data-u0")) > u0, "%s: shift-drag pans the zoomed timeline" % name)
    # hover: the moment under the cursor, exact
    ActionChains(d).move_to_element_with_offset(over, 0, 0).perform()
    info = host.find_element(By.CSS_SELECTOR, ".tl-info").text
    check("heap" in info and " B)" in info and ("run" in info or "prepare" in info),
          "%s: hovering names the moment and its exact bytes: %r" % (name, info[:160]))
    d.save_screenshot(os.path.join(art, name + "-zoomed.png"))
    return (z0, z1), ms


def report_page(d, path, art, name, search):
    load(d, path, art, name)
    hosts = d.find_elements(By.CSS_SELECTOR, ".timeline[data-trace]")
    check(len(hosts) == 1, "%s: one timeline" % name)
    if not hosts:
        return
    host = hosts[0]
    timeline_zoom(d, host, art, name)

    # a kind toggled off in the legend, then on again
    btn = host.find_element(By.CSS_SELECTOR, ".legend button[data-kind]")
    kind = btn.text
    btn.click()
    check(attr(btn, "aria-pressed") == "false", "%s: the legend turns %s off" % (name, kind))
    btn.click()
    check(attr(btn, "aria-pressed") == "true", "%s: and on again" % name)

    # click the largest lifetime bar
    bars = d.find_elements(By.CSS_SELECTOR, ".chart.lifetimes rect.bar")
    check(len(bars) > 0, "%s: the lifetime chart has %d bars" % (name, len(bars)))
    if bars:
        big = max(bars, key=lambda b: float(attr(b, "width")) * float(attr(b, "height")))
        t = attr(big, "data-t")
        title = js(d, "return arguments[0].querySelector('title').textContent", big)
        tname = title.split("\n")[0]
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", big)
        ActionChains(d).move_to_element(big).click().perform()
        text = detail_text(d)
        check(tname in text and "size" in text and "consumed by" in text and "lifetime" in text,
              "%s: clicking tensor #%s (%s) shows it in the detail panel: %r" % (name, t, tname, text[:200]))
        sel_bar = d.find_elements(By.CSS_SELECTOR, ".chart.lifetimes rect.bar.sel")
        sel_row = d.find_elements(By.CSS_SELECTOR, "tr.sel[data-t='%s']" % t)
        slot = d.find_elements(By.CSS_SELECTOR, ".chart.arena rect.slot[data-t='%s']" % t)
        sel_slot = d.find_elements(By.CSS_SELECTOR, ".chart.arena rect.slot.sel[data-t='%s']" % t)
        check(len(sel_bar) == 1 and len(sel_row) >= 1 and len(sel_slot) == len(slot),
              "%s: the tensor is highlighted in the lifetimes (%d), its table rows (%d) and the "
              "arena (%d of %d)" % (name, len(sel_bar), len(sel_row), len(sel_slot), len(slot)))
        tl_band = js(d, "return document.querySelector('.timeline').getAttribute('data-zoomed')")
        d.save_screenshot(os.path.join(art, name + "-tensor.png"))
        # an operator from the panel's links
        links = d.find_elements(By.CSS_SELECTOR, "#detail a")
        if links:
            label = links[0].text
            links[0].click()
            text = detail_text(d)
            check(text.startswith("\u00d7") or ("Operator " + label) in text,
                  "%s: a link in the panel selects operator %s" % (name, label))
            check(len(d.find_elements(By.CSS_SELECTOR, "tr.sel[data-op]")) >= 1,
                  "%s: its row in the operator table is highlighted" % name)
        del tl_band

    # search
    box = d.find_element(By.ID, "search")
    d.execute_script("window.scrollTo(0, 0)")
    box.click()
    box.send_keys(search)
    items = d.find_elements(By.CSS_SELECTOR, "#search-results li[data-st], #search-results li[data-sop]")
    texts = [i.text for i in items]
    check(len(items) > 0 and all(search.lower() in s.lower() for s in texts),
          "%s: searching %r lists %d tensors and operators, each named like it" % (name, search, len(items)))
    matched = d.find_elements(By.CSS_SELECTOR, ".chart rect.match, tr.match")
    check(len(matched) > 0, "%s: the matches are marked in the charts and tables (%d)" % (name, len(matched)))
    d.save_screenshot(os.path.join(art, name + "-search.png"))
    if items:
        first = attr(items[0], "data-name")
        box.send_keys(Keys.ENTER)
        text = detail_text(d)
        check(first in text, "%s: Enter selects the first result (%s)" % (name, first))

    # double-click resets the zoom
    over = host.find_element(By.CSS_SELECTOR, "canvas.over")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", host)
    ActionChains(d).double_click(over).perform()
    check(attr(host, "data-zoomed") == "false", "%s: double-click resets the zoom" % name)
    d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(os.path.join(art, name + "-final.png"))
    errs = console_errors(d)
    check(not errs, "%s: no console error after the interactions%s" % (name, "" if not errs else ": %s" % errs[:3]))


def diff_page(d, path, art, name, search):
    load(d, path, art, name)
    hosts = d.find_elements(By.CSS_SELECTOR, ".timeline[data-trace]")
    check(len(hosts) == 2, "%s: two timelines" % name)
    if len(hosts) != 2:
        return
    timeline_zoom(d, hosts[0], art, name)
    check(attr(hosts[1], "data-zoomed") == "true" and attr(hosts[0], "data-u0") == attr(hosts[1], "data-u0")
          and attr(hosts[0], "data-u1") == attr(hosts[1], "data-u1"),
          "%s: both timelines zoomed to the same range (%s to %s)" % (name, attr(hosts[1], "data-u0"), attr(hosts[1], "data-u1")))
    rows = d.find_elements(By.CSS_SELECTOR, "tr[data-ta]")
    check(len(rows) > 0, "%s: %d changed tensors listed" % (name, len(rows)))
    if rows:
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", rows[0])
        rows[0].click()
        text = detail_text(d)
        check("trace a" in text and "trace b" in text and "size" in text,
              "%s: a changed tensor shows both sides: %r" % (name, text[:200]))
        check("sel" in attr(rows[0], "class"), "%s: its row is highlighted" % name)
    box = d.find_element(By.ID, "search")
    d.execute_script("window.scrollTo(0, 0)")
    box.click()
    box.send_keys(search)
    items = d.find_elements(By.CSS_SELECTOR, "#search-results li[data-st], #search-results li[data-sop]")
    check(len(items) > 0, "%s: searching %r finds %d" % (name, search, len(items)))
    d.save_screenshot(os.path.join(art, name + "-final.png"))
    errs = console_errors(d)
    check(not errs, "%s: no console error after the interactions%s" % (name, "" if not errs else ": %s" % errs[:3]))


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("report", "diff"):
        print(__doc__)
        return 2
    page, path, art, name = sys.argv[1:5]
    search = "expanded_conv"
    if "--search" in sys.argv:
        search = sys.argv[sys.argv.index("--search") + 1]
    os.makedirs(art, exist_ok=True)
    try:
        d = start()
    except WebDriverException as e:
        print("FAIL  cannot start %s through %s: %s" % (CHROME, DRIVER, str(e).splitlines()[0]))
        return 2
    try:
        d.set_window_size(1280, 1000)
        (report_page if page == "report" else diff_page)(d, path, art, name, search)
    finally:
        d.quit()
    print(json.dumps({"checks_failed": len(failures)}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
