package dev.infersim.cli;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The container image for real: a minimal base image assembled from this machine's JDK (a jlink runtime, the shared
 * libraries it and /bin/sh need, {@code podman import}), the image built on it by the cli module's Jib configuration
 * ({@code jib:buildTar} from a {@code tar://} base, no registry), loaded into podman and run as {@code infersim serve}
 * on the host network; the official OpenAI SDK and {@code bench --validate} then talk to it. Skipped where podman is
 * missing, required where INFERSIM_REQUIRE_PODMAN=1 (as .ci/run sets).
 */
class ContainerImageTest {
    /** What the app needs of the JDK: no java.desktop, whose native libraries pull in X11. */
    private static final String MODULES = "java.base,java.logging,java.management,java.naming,java.net.http,java.sql,"
            + "java.xml,jdk.crypto.ec,jdk.management,jdk.unsupported,jdk.zipfs";
    private static final String IMAGE = "localhost/infersim:container-test";

    @TempDir
    Path dir;

    @Test
    void theImageServesTheOpenAiApiAndPassesAValidatedBenchmark() throws Exception {
        assumeTrue(podmanAvailable(), "podman is not installed: the container image test is skipped");
        Path conf = Files.writeString(dir.resolve("containers.conf"), """
                [containers]
                default_ulimits = []
                [engine]
                cgroup_manager = "cgroupfs"
                """);
        Path base = baseImage();
        Path image = dir.resolve("image.tar");
        Path root = Path.of("").toAbsolutePath().getParent();
        run(root, 600, List.of("mvn", "-B", "-q", "-pl", "cli", "-am", "jar:jar", "jib:buildTar",
                "-Dinfersim.image.base=tar://" + base, "-Dimage=" + IMAGE, "-Djib.outputPaths.tar=" + image,
                "-Djib.disableUpdateChecks=true"), conf);
        podman(conf, 120, "load", "-i", image.toString());
        assertEquals("10001:10001 [/usr/local/bin/infersim] map[8000/tcp:{}]", podman(conf, 30, "image", "inspect",
                IMAGE, "--format", "{{.Config.User}} {{.Config.Entrypoint}} {{.Config.ExposedPorts}}").strip());

        // Without INFERSIM_JAVA_OPTS a command gets the defaults ./infersim gives it, from the same file.
        assertEquals("-Xms64m -Xmx512m", podman(conf, 60, "run", "--rm", "--entrypoint", "/bin/sh", IMAGE, "-c",
                ". /usr/local/lib/infersim/jvm-options && infersim_jvm_options serve").strip());

        int port = FreePorts.one();
        String name = "infersim-test-" + ProcessHandle.current().pid();
        podman(conf, 60, "run", "-d", "--name", name, "--network", "host",
                "-e", "INFERSIM_JAVA_OPTS=-Xmx384m", IMAGE, "serve", "--host", "127.0.0.1", "--port",
                String.valueOf(port), "--time-scale", "20");
        try {
            String url = "http://127.0.0.1:" + port;
            awaitHealthy(url);
            smokeTestWithTheOpenAiSdk(url);
            CliRun bench = CliRun.of("bench", "--base-url", url, "--model", "llama-3.1-8b", "--num-prompts", "12",
                    "--request-rate", "20", "--random-input-len", "64", "--random-output-len", "8", "--ignore-eos",
                    "--validate", "--max-send-lag-ms", "1000");
            assertEquals(0, bench.exitCode(), bench.out() + bench.err());
            assertTrue(bench.out().contains("Run valid: yes"), bench.out());
            // The image holds no ps or id: the container's JVM is read from the host's /proc.
            Path proc = Path.of("/proc", podman(conf, 30, "inspect", name, "--format", "{{.State.Pid}}").strip());
            String jvm = Files.readString(proc.resolve("cmdline")).replace('\0', ' ');
            assertTrue(jvm.startsWith("java -Xmx384m "), "INFERSIM_JAVA_OPTS reach the JVM: " + jvm);
            assertTrue(Files.readAllLines(proc.resolve("status")).contains("Uid:\t10001\t10001\t10001\t10001"),
                    "the JVM runs as the image's non-root user");
        } finally {
            podman(conf, 60, "rm", "-f", name);
        }
    }

    private static void smokeTestWithTheOpenAiSdk(String url) {
        OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(url + "/v1").apiKey("unused").maxRetries(0).build();
        try {
            assertTrue(sdk.models().list().data().stream().anyMatch(m -> m.id().equals("llama-3.1-8b")));
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("llama-3.1-8b")
                    .addUserMessage("Tell me about the river").maxCompletionTokens(6)
                    .putAdditionalBodyProperty("ignore_eos", JsonValue.from(true)).build();
            ChatCompletion whole = sdk.chat().completions().create(params);
            assertEquals(6, whole.usage().orElseThrow().completionTokens());
            List<String> pieces = new ArrayList<>();
            try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params)) {
                stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content()
                        .filter(s -> !s.isEmpty()).ifPresent(pieces::add)));
            }
            assertEquals(6, pieces.size());
        } finally {
            sdk.close();
        }
    }

    /**
     * A base image of this machine's Java runtime (jlink) and /bin/sh with the shared libraries they load, saved as
     * a docker-archive for Jib's {@code tar://} base.
     */
    private Path baseImage() throws Exception {
        Path rootfs = dir.resolve("rootfs");
        Path java = rootfs.resolve("opt/java/openjdk");
        Files.createDirectories(java.getParent());
        Files.createDirectories(rootfs.resolve("tmp"));
        Files.createDirectories(rootfs.resolve("bin"));
        run(dir, 300, List.of("jlink", "--add-modules", MODULES, "--strip-debug", "--no-man-pages",
                "--no-header-files", "--output", java.toString()), null);
        Files.copy(Path.of("/bin/sh").toRealPath(), rootfs.resolve("bin/sh"));
        Set<String> libraries = new LinkedHashSet<>();
        List<Path> binaries = new ArrayList<>(List.of(rootfs.resolve("bin/sh"), java.resolve("bin/java")));
        try (Stream<Path> files = Files.walk(java.resolve("lib"))) {
            files.filter(f -> f.toString().endsWith(".so")).forEach(binaries::add);
        }
        for (Path binary : binaries) {
            for (String line : run(dir, 30, List.of("ldd", binary.toString()), null).split("\n")) {
                for (String word : line.trim().split("\\s+")) {
                    if (word.startsWith("/") && !word.startsWith(rootfs.toString())) {
                        libraries.add(word);
                    }
                }
            }
        }
        for (String library : libraries) {
            Path into = rootfs.resolve(library.substring(1));
            Files.createDirectories(into.getParent());
            Files.copy(Path.of(library).toRealPath(), into);
        }
        run(dir, 60, List.of("chmod", "1777", rootfs.resolve("tmp").toString()), null);
        Path rootTar = dir.resolve("rootfs.tar");
        run(dir, 120, List.of("tar", "-C", rootfs.toString(), "-cf", rootTar.toString(), "."), null);
        Path conf = dir.resolve("containers.conf");
        String base = "localhost/infersim-test-base:" + ProcessHandle.current().pid();
        podman(conf, 120, "import", "--change", "ENV PATH=/opt/java/openjdk/bin:/usr/local/bin:/usr/bin:/bin",
                "--change", "ENV JAVA_HOME=/opt/java/openjdk", rootTar.toString(), base);
        Path saved = dir.resolve("base.tar");
        podman(conf, 120, "save", "--format", "docker-archive", "-o", saved.toString(), base);
        return saved;
    }

    /** podman with a private vfs store under the test's folder and runc, as these machines need. */
    private String podman(Path conf, int timeoutSeconds, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("podman", "--root", dir.resolve("storage").toString(),
                "--runroot", dir.resolve("run").toString(), "--storage-driver", "vfs", "--runtime", "/usr/sbin/runc"));
        command.addAll(List.of(args));
        return run(dir, timeoutSeconds, command, conf);
    }

    /** Runs a command to its end; its output, or an assertion failure with the output when it fails. */
    private static String run(Path cwd, int timeoutSeconds, List<String> command, Path containersConf)
            throws IOException, InterruptedException {
        Path log = Files.createTempFile(cwd, "command-", ".log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        if (containersConf != null) {
            builder.environment().put("CONTAINERS_CONF", containersConf.toString());
        }
        Process process = builder.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not end in " + timeoutSeconds + " s:\n"
                    + Files.readString(log));
        }
        String text = Files.readString(log);
        Files.delete(log);
        if (process.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed (" + process.exitValue() + "):\n" + text);
        }
        return text;
    }

    private static void awaitHealthy(String url) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create(url + "/health")).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // the JVM in the container is still starting
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the container's server did not become healthy at " + url + " within 60 s");
    }

    /** Whether podman is on the PATH; where it is required (INFERSIM_REQUIRE_PODMAN=1), its absence fails. */
    private static boolean podmanAvailable() {
        for (String path : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!path.isEmpty() && Files.isExecutable(Path.of(path, "podman"))) {
                return true;
            }
        }
        if ("1".equals(System.getenv("INFERSIM_REQUIRE_PODMAN"))) {
            throw new AssertionError("podman must be installed for this run (.ci/run installs the podman and runc "
                    + "packages)");
        }
        return false;
    }
}
