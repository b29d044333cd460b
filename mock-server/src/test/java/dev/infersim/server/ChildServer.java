package dev.infersim.server;

import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.FrontDoor;
import dev.infersim.server.fleet.MockServer;



/**
 * A mock server in a process of its own, for tests that must change what the process has (its descriptor limit, its
 * heap): prints {@code PORT n} once it listens and stops when its standard input ends. With the argument
 * {@code front-door}, a front door before two replicas: {@code PORT door replica0 replica1}.
 */
public final class ChildServer {
    private ChildServer() {
    }

    public static void main(String[] args) throws Exception {
        ServerOptions options = TestServers.options(TestServers.llama8b(16), 100).eventLoops(2).build();
        if (args.length > 0 && args[0].equals("front-door")) {
            FrontDoor door = FrontDoor.start(options, 2, java.time.Duration.ZERO, s -> { }, "round-robin",
                    dev.infersim.sim.TieBreak.ROUND_ROBIN).toCompletionStage().toCompletableFuture().get();
            System.out.println("PORT " + door.port() + " " + door.fleet().replicas().get(0).port() + " "
                    + door.fleet().replicas().get(1).port());
        } else {
            MockServer server = MockServer.start(options).toCompletionStage().toCompletableFuture().get();
            System.out.println("PORT " + server.port());
        }
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the test closes our input
        }
        System.exit(0);
    }

    /** Starts one: {@code shellPrefix} runs before the JVM (e.g. {@code ulimit -n 256}); {@code jvmArgs} go to it. */
    public static Process start(String shellPrefix, String... jvmArgs) throws java.io.IOException {
        return launch(shellPrefix, "", jvmArgs);
    }

    /** As {@link #start}, a front door before two replicas. */
    public static Process startFrontDoor(String shellPrefix, String... jvmArgs) throws java.io.IOException {
        return launch(shellPrefix, "front-door", jvmArgs);
    }

    private static Process launch(String shellPrefix, String mode, String... jvmArgs) throws java.io.IOException {
        String java = System.getProperty("java.home") + "/bin/java";
        StringBuilder command = new StringBuilder(shellPrefix).append("; exec '").append(java).append("'");
        for (String a : jvmArgs) {
            command.append(" '").append(a).append("'");
        }
        command.append(" -cp '").append(System.getProperty("java.class.path")).append("' ").append(ChildServer.class.getName())
                .append(' ').append(mode);
        return new ProcessBuilder("bash", "-c", command.toString()).redirectErrorStream(true).start();
    }

    /** Reads the child's output up to its {@code PORT} line; the port. */
    public static int port(Process child, StringBuilder output) throws java.io.IOException {
        return ports(child, output)[0];
    }

    /** Reads the child's output up to its {@code PORT} line; the ports it lists. */
    public static int[] ports(Process child, StringBuilder output) throws java.io.IOException {
        java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            output.append(line).append('\n');
            if (line.startsWith("PORT ")) {
                Thread drain = new Thread(() -> {
                    try {
                        for (String l = out.readLine(); l != null; l = out.readLine()) {
                            synchronized (output) {
                                output.append(l).append('\n');
                            }
                        }
                    } catch (java.io.IOException ignored) {
                        // the child ended
                    }
                }, "child-output");
                drain.setDaemon(true);
                drain.start();
                return java.util.Arrays.stream(line.substring(5).trim().split(" ")).mapToInt(Integer::parseInt).toArray();
            }
        }
        throw new IllegalStateException("the child server ended before listening:\n" + output);
    }
}
