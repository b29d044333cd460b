package dev.infersim.server;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's timeline of every finished choice ({@code infersim serve --truth-log FILE}), as JSON Lines, for checking
 * what a benchmark harness measured. Event loops hand finished choices to a bounded queue without waiting (a full queue
 * drops the row and counts it); one writer thread numbers the rows ({@code seq}, from 1), writes them to the file and
 * keeps the newest in a ring bounded by characters, which {@code GET /infersim/truth?since=SEQ} serves. The engine
 * thread never sees this class. One log may serve a whole fleet: rows name their replica.
 */
public final class TruthLog implements AutoCloseable {
    /** Finished choices waiting for the writer; at a row per choice, far more than any burst a server finishes at once. */
    static final int QUEUE_ROWS = 65_536;
    /** Default bound of the in-memory ring: 32 Mi characters (a 1,000-token choice's row is about 40 KB). */
    public static final long DEFAULT_RING_CHARS = 32L << 20;

    private record Pending(GroundTruth truth, Choice choice) { }

    private record Row(long seq, String line) { }

    private static final Pending STOP = new Pending(null, null);

    private final Path file;
    private final Writer out;
    private final BlockingQueue<Pending> queue = new ArrayBlockingQueue<>(QUEUE_ROWS);
    private final AtomicLong dropped = new AtomicLong();
    private final long ringChars;
    private final Thread writer;
    // guarded by ring
    private final ArrayDeque<Row> ring = new ArrayDeque<>();
    private long ringSize;
    private long written;
    private IOException failure;
    private boolean closed;

    private TruthLog(Path file, Writer out, long ringChars) {
        this.file = file;
        this.out = out;
        this.ringChars = ringChars;
        this.writer = new Thread(this::drain, "infersim-truth-log");
        writer.setDaemon(true);
        writer.start();
    }

    /** Creates (or truncates) {@code file} and starts the writer thread. */
    public static TruthLog open(Path file, long ringChars) throws IOException {
        if (ringChars < 1) {
            throw new IllegalArgumentException("truth ring must hold at least 1 character, got " + ringChars);
        }
        return new TruthLog(file, Files.newBufferedWriter(file, StandardCharsets.UTF_8), ringChars);
    }

    public Path file() {
        return file;
    }

    /** Rows lost because the writer fell {@value #QUEUE_ROWS} rows behind. */
    public long dropped() {
        return dropped.get();
    }

    /** Rows written to the file so far (the last {@code seq}). */
    public long written() {
        synchronized (ring) {
            return written;
        }
    }

    /** Event loop: queue a finished choice's row; never waits. */
    void offer(GroundTruth truth, Choice c) {
        if (!queue.offer(new Pending(truth, c))) {
            dropped.incrementAndGet();
        }
    }

    /** Rows after {@code since} still in the ring, at most {@code limit}, oldest first. */
    public Page since(long since, int limit) {
        synchronized (ring) {
            long oldest = ring.isEmpty() ? written + 1 : ring.peekFirst().seq();
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
            return new Page(body.toString(), n, last, Math.max(0, oldest - 1 - since), dropped.get());
        }
    }

    /**
     * A page of rows: {@code body} holds {@code rows} JSON Lines; {@code next} is the {@code since} to ask next;
     * {@code missed} rows after the asked {@code since} had already left the ring; {@code dropped} rows were never logged.
     */
    public record Page(String body, int rows, long next, long missed, long dropped) { }

    private void drain() {
        try {
            while (true) {
                Pending p = queue.take();
                if (p == STOP) {
                    break;
                }
                write(p);
                if (queue.isEmpty()) {
                    out.flush();
                }
            }
            out.flush();
        } catch (IOException e) {
            synchronized (ring) {
                failure = e;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void write(Pending p) throws IOException {
        long seq;
        synchronized (ring) {
            seq = written + 1;
        }
        StringWriter line = new StringWriter(512);
        try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(line)) {
            p.truth().writeRow(g, seq, p.choice());
        }
        String row = line.toString();
        out.write(row);
        out.write('\n');
        synchronized (ring) {
            written = seq;
            ring.addLast(new Row(seq, row));
            ringSize += row.length();
            while (ringSize > ringChars && ring.size() > 1) {
                ringSize -= ring.removeFirst().line().length();
            }
        }
    }

    /** Writes every queued row, flushes and closes the file; call once the servers using it have closed. */
    @Override
    public void close() throws IOException {
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
        out.close();
        synchronized (ring) {
            if (failure != null) {
                throw new UncheckedIOException("writing the truth log " + file, failure);
            }
        }
    }
}
