package dev.infersim.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Moves the calling thread into Linux's SCHED_FIFO real-time class with util-linux's {@code chrt}: Java has no API for
 * it. Under the default scheduler a woken engine thread may wait until a busy event loop or another process ends its
 * time slice, so steps end milliseconds late at the tail; a real-time thread runs as soon as it wakes. Needs Linux,
 * {@code chrt} on the PATH, and root or CAP_SYS_NICE.
 */
final class RealtimePriority {
    /** Low in the 1..99 range: above every normal thread, below the kernel's own real-time threads. */
    static final int PRIORITY = 10;

    private RealtimePriority() {
    }

    /** Puts the calling thread on SCHED_FIFO; throws {@link IllegalStateException} saying why when it cannot. */
    static void applyToCurrentThread() {
        String tid;
        try {
            tid = Path.of("/proc/thread-self").toRealPath().getFileName().toString(); // /proc/PID/task/TID
        } catch (IOException e) {
            throw new IllegalStateException("no /proc/thread-self: SCHED_FIFO needs Linux");
        }
        String command = "chrt -f -p " + PRIORITY + " " + tid;
        try {
            Process chrt = new ProcessBuilder("chrt", "-f", "-p", String.valueOf(PRIORITY), tid).redirectErrorStream(true).start();
            String output = new String(chrt.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!chrt.waitFor(10, TimeUnit.SECONDS)) {
                chrt.destroyForcibly();
                throw new IllegalStateException(command + " did not finish");
            }
            if (chrt.exitValue() != 0) {
                throw new IllegalStateException(command + " failed: " + output.lines().findFirst().orElse("exit " + chrt.exitValue())
                        + " (needs root or CAP_SYS_NICE)");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run chrt (util-linux): " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(command + " was interrupted");
        }
    }
}
