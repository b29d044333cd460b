package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.json.Json;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real headless Chromium driven over the Chrome DevTools Protocol (a WebSocket of JSON commands), for pages that
 * change while they are open: navigate, evaluate JavaScript in the page, take a screenshot. Only the JDK's HTTP and
 * WebSocket clients; no driver to install. Public, in this module's test jar, for the pages of the other modules.
 */
public final class HeadlessBrowser implements AutoCloseable {
    public static final String BINARY = "chromium";
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://[^\\s]+)");

    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    /**
     * Whether Chromium is on the PATH. Where the browser is required (INFERSIM_REQUIRE_BROWSER=1, as .ci/run sets), its
     * absence fails the test instead of skipping it.
     */
    public static boolean available() {
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

    public HeadlessBrowser(Path profile) throws IOException, InterruptedException {
        process = new ProcessBuilder(BINARY, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + profile, "--remote-debugging-port=0", "--window-size=1400,1100", "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String browserUrl = awaitListening();
        URI browser = URI.create(browserUrl);
        HttpClient http = HttpClient.newHttpClient();
        JsonNode targets = Json.MAPPER.readTree(http.send(HttpRequest.newBuilder(
                        URI.create("http://" + browser.getHost() + ":" + browser.getPort() + "/json/list")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
        String page = null;
        for (JsonNode t : targets) {
            if ("page".equals(t.path("type").asText())) {
                page = t.get("webSocketDebuggerUrl").asText();
                break;
            }
        }
        if (page == null) {
            process.destroyForcibly();
            throw new AssertionError("chromium opened no page: " + targets);
        }
        socket = http.newWebSocketBuilder().buildAsync(URI.create(page), new Listener()).join();
    }

    private String awaitListening() throws IOException {
        BufferedReader err = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        for (String line; (line = err.readLine()) != null; ) {
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(() -> err.lines().forEach(l -> { }), "chromium-stderr");
                drain.setDaemon(true);
                drain.start();
                return m.group(1);
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("chromium exited before listening:\n" + seen);
    }

    /** Loads a URL and waits for its load event. */
    public void open(String url) {
        call("Page.enable", Json.MAPPER.createObjectNode());
        call("Page.navigate", Json.MAPPER.createObjectNode().put("url", url));
        waitFor(() -> "complete".equals(eval("document.readyState").asText()), Duration.ofSeconds(30), () -> "page load");
    }

    /** The value of a JavaScript expression in the page (JSON-serialisable results only). */
    public JsonNode eval(String expression) {
        JsonNode r = call("Runtime.evaluate", Json.MAPPER.createObjectNode().put("expression", expression)
                .put("returnByValue", true));
        if (r.has("exceptionDetails")) {
            throw new AssertionError("page script failed: " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** Polls until the condition holds, failing after the timeout with what was awaited and what was seen. */
    public void waitFor(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for " + what.get());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Writes a PNG of the page as it is now. */
    public void screenshot(Path png) throws IOException {
        JsonNode r = call("Page.captureScreenshot", Json.MAPPER.createObjectNode().put("format", "png")
                .put("captureBeyondViewport", true));
        Files.createDirectories(png.toAbsolutePath().getParent());
        Files.write(png, Base64.getDecoder().decode(r.get("data").asText()));
    }

    private JsonNode call(String method, ObjectNode params) {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        ObjectNode message = Json.MAPPER.createObjectNode().put("id", id).put("method", method);
        message.set("params", params);
        socket.sendText(message.toString(), true).join();
        try {
            JsonNode r = reply.get(30, TimeUnit.SECONDS);
            if (r.has("error")) {
                throw new AssertionError(method + " failed: " + r.get("error"));
            }
            return r.path("result");
        } catch (Exception e) {
            throw new AssertionError(method + ": " + e, e);
        }
    }

    @Override
    public void close() {
        socket.abort();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Collects frames into messages and completes each command's future by its id; events are ignored. */
    private final class Listener implements WebSocket.Listener {
        private final StringBuilder buffer = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            buffer.append(data);
            if (last) {
                try {
                    JsonNode message = Json.MAPPER.readTree(buffer.toString());
                    CompletableFuture<JsonNode> f = message.has("id") ? pending.remove(message.get("id").asInt()) : null;
                    if (f != null) {
                        f.complete(message);
                    }
                } catch (IOException e) {
                    pending.values().forEach(f -> f.completeExceptionally(e));
                }
                buffer.setLength(0);
            }
            ws.request(1);
            return null;
        }
    }
}
