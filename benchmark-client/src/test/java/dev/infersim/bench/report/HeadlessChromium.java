package dev.infersim.bench.report;

import dev.infersim.server.PageLayout;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Opens HTML files in a real headless Chromium and returns what each one rendered. Starting Chromium costs seconds, so
 * one start loads every page: a harness page holds each file in a full-width iframe and, once all have loaded (their
 * scripts ran, charts drew), copies each page's rendered body, minus scripts, into its own DOM, which Chromium dumps.
 * Page script errors that escape the page are caught too, from Chromium's console log, and each page's layout is checked
 * in its own frame ({@link PageLayout}) before it is copied.
 */
final class HeadlessChromium {
    static final String BINARY = "chromium";
    private static final Pattern PAGE = Pattern.compile("<section data-page=\"([^\"]*)\">(.*?)</section><!--end-->",
            Pattern.DOTALL);

    private HeadlessChromium() {
    }

    /**
     * Whether Chromium is on the PATH. Where the browser is required (INFERSIM_REQUIRE_BROWSER=1, as .ci/run sets),
     * its absence fails the test instead of skipping it.
     */
    static boolean available() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, BINARY))) {
                return true;
            }
        }
        if ("1".equals(System.getenv("INFERSIM_REQUIRE_BROWSER"))) {
            throw new AssertionError(BINARY + " must be installed for this run (.ci/run installs the chromium package)");
        }
        return false;
    }

    /** Loads the pages (named by file name, which must differ) in one Chromium run; work files go under dir. */
    static Map<String, RenderedReport> render(Path dir, List<Path> pages) throws IOException, InterruptedException {
        Path harness = dir.resolve("harness.html");
        StringBuilder frames = new StringBuilder();
        for (Path page : pages) {
            // a report's charts take the width of their page, as in a desktop browser window
            frames.append("<iframe style=\"width:1280px;height:900px\" data-page=\"").append(page.getFileName())
                    .append("\" src=\"").append(page.toAbsolutePath().toUri()).append("\"></iframe>\n");
        }
        Files.writeString(harness, HARNESS.replace("%FRAMES%", frames).replace("%LAYOUT%", PageLayout.SCRIPT),
                StandardCharsets.UTF_8);
        Path out = dir.resolve("dom.html");
        Path log = dir.resolve("chromium.log");
        Process p = new ProcessBuilder(BINARY, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--user-data-dir=" + dir.resolve("chromium-profile"),
                // file pages are each their own origin by default; the harness must read its frames
                "--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
                "--dump-dom", harness.toAbsolutePath().toUri().toString())
                .redirectOutput(out.toFile()).redirectError(log.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 120 s");
        }
        String stderr = Files.readString(log, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError("chromium exited with " + p.exitValue() + ":\n" + stderr);
        }
        return split(Files.readString(out, StandardCharsets.UTF_8), pages, stderr);
    }

    private static Map<String, RenderedReport> split(String dom, List<Path> pages, String stderr) {
        Map<String, RenderedReport> out = new LinkedHashMap<>();
        Matcher m = PAGE.matcher(dom);
        while (m.find()) {
            String name = m.group(1);
            List<String> errors = stderr.lines().filter(l -> l.contains(":CONSOLE") && l.contains("Uncaught")
                    && l.contains(name)).toList();
            out.put(name, new RenderedReport(m.group(2), errors));
        }
        if (out.size() != pages.size()) {
            throw new AssertionError("the harness rendered " + out.keySet() + " of " + pages + ":\n" + dom
                    .substring(0, Math.min(dom.length(), 2000)) + "\n" + stderr);
        }
        return out;
    }

    private static final String HARNESS = """
            <!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
            %FRAMES%
            <script>
            %LAYOUT%
            window.addEventListener('load', () => {
              for (const f of Array.from(document.querySelectorAll('iframe'))) {
                const s = document.createElement('section');
                s.dataset.page = f.dataset.page;
                // the layout is read where the page drew itself, before its body is copied out of its frame
                const problems = infersimLayoutProblems(f.contentWindow);
                const body = f.contentDocument.body.cloneNode(true);
                body.querySelectorAll('script').forEach(e => e.remove());
                const list = document.createElement('ol');
                list.className = 'layout-problems';
                for (const p of problems) { const li = document.createElement('li'); li.textContent = p; list.appendChild(li); }
                s.innerHTML = body.innerHTML + list.outerHTML;
                document.body.appendChild(s);
                document.body.appendChild(document.createComment('end'));
                f.remove();
              }
              document.querySelectorAll('body > script').forEach(e => e.remove());
            });
            </script></body></html>
            """;
}
