package dev.infersim.cli;

import dev.infersim.common.ConfigException;

import java.util.ArrayList;
import java.util.List;

/**
 * A command's output files written one after another, each whole or not at all, every one attempted: a file that
 * cannot be written (a full result directory) is remembered, not thrown, so the files after it (an HTML report into
 * another, writable directory) are still written; then {@link #finish} ends the command with one line naming every
 * file it could not write and why (exit code 2).
 */
final class OutputWrites {
    private final List<String> failures = new ArrayList<>();

    /** Runs {@code write}; false, with its one-line reason kept, when its file could not be written. */
    boolean attempt(Runnable write) {
        try {
            write.run();
            return true;
        } catch (ConfigException e) {
            failures.add(e.getMessage());
            return false;
        }
    }

    /** A file that could not be written elsewhere (a run's per-request rows), or null for none. */
    void failed(String failure) {
        if (failure != null) {
            failures.add(failure);
        }
    }

    /** Ends the command with one line naming every file that could not be written, if any. */
    void finish() {
        if (!failures.isEmpty()) {
            throw new ConfigException(String.join("; ", failures));
        }
    }
}
