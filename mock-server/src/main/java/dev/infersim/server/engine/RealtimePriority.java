package dev.infersim.server.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Moves the calling thread into Linux's SCHED_FIFO real-time class with util-linux's {@code chrt}: Java has no API for
 * it. Under the default scheduler a woken thread may wait until a busy event loop or another process ends its time
 * slice: the engine thread then ends steps milliseconds late at the tail, an event loop reads a request milliseconds
 * after its bytes arrived (on 2 cores shared with a client, 4-6 ms at p99: bench/benchmark-client, "Truth at the
 * wire"). A real-time thread runs as soon as it wakes. Needs Linux, {@code chrt} on the PATH, and root or
 * CAP_SYS_NICE.
 */
public final class RealtimePriority {
    /** The engine thread's: low in the 1..99 range, above every normal thread, below the kernel's own real-time threads. */
    static final int PRIORITY = 10;
    /**
     * The event loops': above every normal thread, so that a loop woken by a request's bytes reads them at once, and
     * below a real-time engine thread, whose step deadlines a loop busy writing must not delay.
     */
    public static final int EVENT_LOOP_PRIORITY = PRIORITY - 1;

    /**
     * How long before a step's deadline a real-time engine thread ({@link EngineLoop}) stops parking and spins. Now and
     * then parkNanos wakes it 1.5-5 ms late even on SCHED_FIFO (no safepoint or GC phase coincides), which kept step
     * lag p99 at 1.4-3.5 ms on the 2,000-stream benchmark; spinning the last 6 ms brought it under 0.35 ms in four runs
     * of five. It costs up to 6 ms of one core per step, which a user who asked for a real-time engine has set a core
     * aside for; without SCHED_FIFO the scheduler preempts a spinning thread anyway (p99 7.6 ms with it), so there the
     * spin stays short.
     *
     * <p>No spin takes more than half the wait, though: steps shorter than the spin (a light batch, the ramp-up of
     * a benchmark) had the thread spinning without pause, and Linux stops every real-time thread of a CPU that used
     * up 95% of a second (kernel.sched_rt_runtime_us) for the rest of that second. /proc/thread-self/schedstat showed
     * the engine thread waiting 21-50 ms on the run queue in exactly those stalls, the 35-132 ms late steps the
     * benchmark had kept finding.
     */
    static final long SPIN_NANOS = 6_000_000;

    private RealtimePriority() {
    }

    /**
     * Puts the calling thread on SCHED_FIFO at {@code priority}; throws {@link IllegalStateException} saying why when it
     * cannot.
     */
    public static void applyToCurrentThread(int priority) {
        String tid;
        try {
            tid = Path.of("/proc/thread-self").toRealPath().getFileName().toString(); // /proc/PID/task/TID
        } catch (IOException e) {
            throw new IllegalStateException("no /proc/thread-self: SCHED_FIFO needs Linux");
        }
        String command = "chrt -f -p " + priority + " " + tid;
        try {
            Process chrt = new ProcessBuilder("chrt", "-f", "-p", String.valueOf(priority), tid).redirectErrorStream(true).start();
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
