package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import dev.infersim.server.observe.TruthLog;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code serve}'s ground-truth log ({@link TruthLog}): its file, its rotation, and the losses reported on close. */
@OptionGroup.In(OptionGroup.OBSERVE)
public final class TruthLogOptions {
    @Option(names = "--truth-log", paramLabel = "FILE", description = "Write the server's timeline of every finished "
            + "request (one JSON line per choice: request id, replica, arrival, first token, each token, finish, token "
            + "counts, finish reason; model ms and wall epoch ms) to FILE, and serve the newest rows at "
            + "GET /infersim/truth?since=SEQ, for checking a benchmark harness (infersim check-harness).")
    Path file;

    @Option(names = "--truth-log-max-bytes", defaultValue = "0", paramLabel = "BYTES",
            description = "Rotate the truth log before it grows past this: FILE becomes FILE.1, earlier backups move up "
                    + "(default: ${DEFAULT-VALUE}, no cap).")
    long maxBytes;

    @Option(names = "--truth-log-backups", defaultValue = "1", paramLabel = "N",
            description = "Rotated truth logs kept, FILE.1 to FILE.N, with --truth-log-max-bytes (default: ${DEFAULT-VALUE}).")
    int backups;

    /** The log is closed (and its losses reported) once, by whichever of the main thread and the hook gets there. */
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The log, null without {@code --truth-log}; open it last, once every other flag is valid, so a bad flag leaves no file. */
    public TruthLog open() {
        if (file == null) {
            return null;
        }
        TruthLog.Rotation rotation;
        try {
            rotation = maxBytes == 0 ? TruthLog.Rotation.NONE : new TruthLog.Rotation(maxBytes, backups);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--truth-log-max-bytes " + maxBytes + " --truth-log-backups "
                    + backups + ": " + e.getMessage());
        }
        try {
            return TruthLog.open(file, TruthLog.DEFAULT_RING_CHARS, rotation);
        } catch (IOException e) {
            throw new ConfigException("--truth-log " + file + ": cannot write (" + e.getMessage() + ")");
        }
    }

    /** Closes {@code log} (null: none) once and says on stderr what it lost, if anything: the count and why, in one line. */
    public void close(TruthLog log) {
        if (log == null || !closed.compareAndSet(false, true)) {
            return;
        }
        log.close();
        if (log.dropped() > 0) {
            String why = (log.droppedQueueFull() > 0 ? log.droppedQueueFull() + " because the writer fell behind" : "")
                    + (log.droppedQueueFull() > 0 && log.droppedWriteFailed() > 0 ? ", " : "")
                    + (log.droppedWriteFailed() > 0 ? log.droppedWriteFailed() + " because the file would not take them ("
                    + log.writeFailure() + ")" : "");
            System.err.println("infersim: --truth-log " + log.file() + ": " + log.dropped() + " rows dropped (" + why + ")");
        }
    }
}
