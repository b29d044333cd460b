package dev.infersim.server.observe;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.json.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's timeline of every finished choice ({@code infersim serve --truth-log FILE}), as JSON Lines, for checking
 * what a benchmark harness measured. Event loops hand finished choices to a bounded queue without waiting; one writer
 * thread numbers the rows ({@code seq}, from 1), writes them to the file and keeps the newest in a ring bounded by
 * characters, which {@code GET /infersim/truth?since=SEQ} serves. The engine thread never sees this class. One log may
 * serve a whole fleet: rows name their replica.
 *
 * <p>Nothing is lost silently. A row that finds the queue full, and a batch of rows the file would not take (a full
 * disk), are dropped and counted ({@link #dropped}, the {@code x-infersim-truth-dropped} header, the metrics, the line
 * {@code serve} prints at exit); a failed write is cut back off the file, which keeps whole rows only, and dropped rows
 * leave a gap in {@code seq}. With a size cap the file is rotated: {@code FILE} becomes {@code FILE.1}, the older
 * backups move up by one and the oldest beyond the count is deleted.
 */
public final class TruthLog implements AutoCloseable {
    /** Finished choices waiting for the writer; at a row per choice, far more than any burst a server finishes at once. */
    static final int QUEUE_ROWS = 65_536;
    /** Default bound of the in-memory ring: 32 Mi characters (a 1,000-token choice's row is about 40 KB). */
    public static final long DEFAULT_RING_CHARS = 32L << 20;
    /** Rows written to the file in one write, at most. */
    private static final int BATCH_ROWS = 256;

    /**
     * The file's size cap: once the next rows would take it past {@code maxBytes}, it is rotated, keeping {@code backups}
     * earlier files. {@code maxBytes} 0: no cap.
     */
    public record Rotation(long maxBytes, int backups) {
        public static final Rotation NONE = new Rotation(0, 0);

        public Rotation {
            if (maxBytes < 0 || (maxBytes > 0 && backups < 1) || backups < 0) {
                throw new IllegalArgumentException("a truth log size cap needs at least 1 backup and a size >= 0, got "
                        + maxBytes + " bytes and " + backups + " backups");
            }
        }
    }

    /** A finished choice's row, written once the writer knows its number. */
    public interface PendingRow {
        void write(JsonGenerator g, long seq) throws IOException;
    }

    private record Row(long seq, String line) { }

    private static final PendingRow STOP = (g, seq) -> { };

    private final Path file;
    private final Rotation rotation;
    private FileChannel out;
    /** Bytes of whole rows in the current file. */
    private long size;
    private final BlockingQueue<PendingRow> queue = new ArrayBlockingQueue<>(QUEUE_ROWS);
    private final AtomicLong droppedQueueFull = new AtomicLong();
    private final AtomicLong droppedWriteFailed = new AtomicLong();
    private volatile String writeFailure;
    private final long ringChars;
    private final Thread writer;
    // guarded by ring
    private final ArrayDeque<Row> ring = new ArrayDeque<>();
    private long ringSize;
    /** The last {@code seq} given out; rows up to it were written or dropped. */
    private long lastSeq;
    private long written;
    private boolean closed;

    private TruthLog(Path file, FileChannel out, long ringChars, Rotation rotation) {
        this.file = file;
        this.out = out;
        this.ringChars = ringChars;
        this.rotation = rotation;
        this.writer = new Thread(this::drain, "infersim-truth-log");
        writer.setDaemon(true);
        writer.start();
    }

    /** Creates (or truncates) {@code file} and starts the writer thread; no size cap. */
    public static TruthLog open(Path file, long ringChars) throws IOException {
        return open(file, ringChars, Rotation.NONE);
    }

    /** Creates (or truncates) {@code file} and starts the writer thread, rotating it as {@code rotation} says. */
    public static TruthLog open(Path file, long ringChars, Rotation rotation) throws IOException {
        if (ringChars < 1) {
            throw new IllegalArgumentException("truth ring must hold at least 1 character, got " + ringChars);
        }
        return new TruthLog(file, create(file), ringChars, rotation);
    }

    private static FileChannel create(Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
    }

    public Path file() {
        return file;
    }

    /** Rows lost: the writer fell {@value #QUEUE_ROWS} rows behind, or the file would not take them. */
    public long dropped() {
        return droppedQueueFull.get() + droppedWriteFailed.get();
    }

    /** Rows dropped because the queue was full. */
    public long droppedQueueFull() {
        return droppedQueueFull.get();
    }

    /** Rows dropped because the file would not take them. */
    public long droppedWriteFailed() {
        return droppedWriteFailed.get();
    }

    /** Why the last write failed (a full disk: "No space left on device"), or null if none has. */
    public String writeFailure() {
        return writeFailure;
    }

    /** Rows written to the file so far. */
    public long written() {
        synchronized (ring) {
            return written;
        }
    }

    /** Event loop: queue a finished choice's row; never waits. */
    public void offer(PendingRow row) {
        if (!queue.offer(row)) {
            droppedQueueFull.incrementAndGet();
        }
    }

    /** Rows after {@code since} still in the ring, at most {@code limit}, oldest first. */
    public Page since(long since, int limit) {
        synchronized (ring) {
            long oldest = ring.isEmpty() ? lastSeq + 1 : ring.peekFirst().seq();
            StringBuilder body = new StringBuilder();
            long last = Math.max(since, oldest - 1);
            int n = 0;
            for (Row r : ring) {
                if (n == limit) {
                    break;
                }
                if (r.seq() > since) {
                    body.append(r.line()).append('\n');
                    last = r.seq();
                    n++;
                }
            }
            return new Page(body.toString(), n, last, Math.max(0, oldest - 1 - since), dropped());
        }
    }

    /**
     * A page of rows: {@code body} holds {@code rows} JSON Lines; {@code next} is the {@code since} to ask next;
     * {@code missed} rows after the asked {@code since} had already left the ring; {@code dropped} rows were never logged.
     */
    public record Page(String body, int rows, long next, long missed, long dropped) { }

    /** The log's counters in Prometheus' text format, for {@code /metrics}. */
    public String metrics() {
        return "# HELP infersim:truth_log_rows_total Rows written to the truth log file.\n"
                + "# TYPE infersim:truth_log_rows_total counter\n"
                + "infersim:truth_log_rows_total " + written() + "\n"
                + "# HELP infersim:truth_log_dropped_total Rows the truth log lost: its queue was full, or the file would not take them.\n"
                + "# TYPE infersim:truth_log_dropped_total counter\n"
                + "infersim:truth_log_dropped_total{reason=\"queue_full\"} " + droppedQueueFull.get() + "\n"
                + "infersim:truth_log_dropped_total{reason=\"write_failed\"} " + droppedWriteFailed.get() + "\n";
    }

    private void drain() {
        List<PendingRow> batch = new ArrayList<>(BATCH_ROWS);
        while (true) {
            try {
                batch.add(queue.take());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            queue.drainTo(batch, BATCH_ROWS - 1);
            boolean stop = batch.remove(STOP);
            writeRows(batch);
            batch.clear();
            if (stop) {
                return;
            }
        }
    }

    /**
     * Numbers and formats {@code rows} and writes them, in one write unless the size cap rotates the file between them;
     * rows a write could not put in the file are dropped and counted.
     */
    private void writeRows(List<PendingRow> rows) {
        List<Row> chunk = new ArrayList<>(rows.size());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (PendingRow p : rows) {
            Row row = format(p);
            byte[] line = (row.line() + "\n").getBytes(StandardCharsets.UTF_8);
            long before = size + bytes.size();
            if (rotation.maxBytes() > 0 && before > 0 && before + line.length > rotation.maxBytes()) {
                commit(chunk, bytes);
                rotate();
            }
            chunk.add(row);
            bytes.writeBytes(line);
        }
        commit(chunk, bytes);
    }

    private Row format(PendingRow p) {
        long seq;
        synchronized (ring) {
            seq = ++lastSeq;
        }
        StringWriter line = new StringWriter(512);
        try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(line)) {
            p.write(g, seq);
        } catch (IOException e) {
            throw new IllegalStateException("writing a row into memory", e);
        }
        return new Row(seq, line.toString());
    }

    /** Writes {@code chunk}'s bytes and adds its rows to the ring, or counts them dropped; empties both. */
    private void commit(List<Row> chunk, ByteArrayOutputStream bytes) {
        if (chunk.isEmpty()) {
            return;
        }
        try {
            write(bytes.toByteArray());
        } catch (IOException e) {
            droppedWriteFailed.addAndGet(chunk.size());
            writeFailure = e.getMessage() != null ? e.getMessage() : e.toString();
            chunk.clear();
            bytes.reset();
            return;
        }
        synchronized (ring) {
            for (Row r : chunk) {
                ring.addLast(r);
                ringSize += r.line().length();
            }
            written += chunk.size();
            while (ringSize > ringChars && ring.size() > 1) {
                ringSize -= ring.removeFirst().line().length();
            }
        }
        chunk.clear();
        bytes.reset();
    }

    /**
     * Appends {@code bytes} whole, or cuts the file back to its last whole row and throws. A file that a failed rotation
     * left closed is opened again (for appending) first.
     */
    private void write(byte[] bytes) throws IOException {
        if (out == null) {
            out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            size = out.size();
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        try {
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
            size += bytes.length;
        } catch (IOException e) {
            try {
                out.truncate(size); // frees what the partial write took, so a full disk keeps whole rows
                out.position(size);
            } catch (IOException ignored) {
                // the file stays as the failed write left it; its last line may be cut
            }
            throw e;
        }
    }

    /** FILE -> FILE.1 -> FILE.2 ... up to the backups kept; a new FILE starts empty. A failure is kept for the report. */
    private void rotate() {
        try {
            if (out != null) {
                out.close();
                out = null;
            }
            for (int k = rotation.backups(); k >= 1; k--) {
                Path from = k == 1 ? file : backup(k - 1);
                if (Files.exists(from)) {
                    Files.move(from, backup(k), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            out = create(file);
            size = 0;
        } catch (IOException e) {
            writeFailure = "rotating: " + (e.getMessage() != null ? e.getMessage() : e.toString());
        }
    }

    private Path backup(int k) {
        return file.resolveSibling(file.getFileName() + "." + k);
    }

    /** Writes every queued row and closes the file; call once the servers using it have closed. Never throws. */
    @Override
    public void close() {
        synchronized (ring) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            queue.put(STOP);
            writer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            writeFailure = e.getMessage();
        }
    }
}
