package dev.infersim.cli;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Explains a Ctrl-C that comes before a command has taken charge of interrupts. Starting the JVM, parsing the flags,
 * opening the workload and loading the tokenizer take seconds on a busy machine before {@link InterruptGuard} (or
 * the server's own hook) is installed; an interrupt then used to end the JVM with exit code 130 and no word at all.
 * Installed first thing in {@code main}, it prints one line unless the command has handed over.
 */
final class EarlyInterrupt implements Runnable {

    private static volatile EarlyInterrupt installed;

    private final AtomicBoolean handedOver = new AtomicBoolean();
    private final PrintStream err;

    EarlyInterrupt(PrintStream err) {
        this.err = err;
    }

    /** Registers the hook for this process. */
    static void install() {
        EarlyInterrupt early = new EarlyInterrupt(System.err);
        installed = early;
        Runtime.getRuntime().addShutdownHook(new Thread(early, "infersim-early-interrupt"));
    }

    /**
     * The command handles interrupts itself from now on, or has ended: the hook stays silent. Does nothing when no
     * hook was installed (the CLI run in-process, as tests do).
     */
    static void handOver() {
        EarlyInterrupt early = installed;
        if (early != null) {
            early.markHandedOver();
        }
    }

    void markHandedOver() {
        handedOver.set(true);
    }

    /** The shutdown hook: the JVM is going down before the command took over, so an interrupt stopped it. */
    @Override
    public void run() {
        if (handedOver.compareAndSet(false, true)) {
            err.println("infersim: interrupted before the run started; nothing was measured or written");
            err.flush();
        }
    }
}
