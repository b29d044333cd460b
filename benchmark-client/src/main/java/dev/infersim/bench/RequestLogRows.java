package dev.infersim.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The rows of a per-request JSONL file ({@link RequestLog}) in request order. The file holds them in the order the
 * requests ended; one pass notes where each row lies by its request index (12 bytes a request, the only per-request
 * memory), then every walk reads the rows one at a time in index order.
 */
final class RequestLogRows {
    private static final JsonFactory JSON = new JsonFactory();

    /** Reads one row; the parser stands on the row's START_OBJECT. */
    interface RowReader {
        void read(JsonParser row) throws IOException;
    }

    private final Path file;
    private long[] offsets = new long[1024]; // by request index; -1 where the file has no row
    private int[] lengths = new int[1024];
    private int longest;

    RequestLogRows(Path file) {
        this.file = file;
        Arrays.fill(offsets, -1);
        try (JsonParser p = JSON.createParser(file.toFile())) {
            while (p.nextToken() == JsonToken.START_OBJECT) {
                long offset = p.currentTokenLocation().getByteOffset();
                long index = -1;
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    if (name.equals("index")) {
                        index = p.getLongValue();
                    } else {
                        p.skipChildren();
                    }
                }
                put(index, offset, Math.toIntExact(p.currentLocation().getByteOffset() - offset));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read request detail " + file + ": " + e.getMessage(), e);
        }
    }

    private void put(long index, long offset, int length) {
        if (index < 0) {
            throw new IllegalArgumentException("a row of " + file + " has no request index");
        }
        int i = Math.toIntExact(index);
        if (i >= offsets.length) {
            int n = offsets.length;
            offsets = Arrays.copyOf(offsets, Math.max(i + 1, 2 * n));
            lengths = Arrays.copyOf(lengths, offsets.length);
            Arrays.fill(offsets, n, offsets.length, -1);
        }
        offsets[i] = offset;
        lengths[i] = length;
        longest = Math.max(longest, length);
    }

    /** Calls {@code reader} on every row, lowest request index first. */
    void forEach(RowReader reader) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(longest);
        try (FileChannel channel = FileChannel.open(file)) {
            for (int i = 0; i < offsets.length; i++) {
                if (offsets[i] < 0) {
                    continue;
                }
                buffer.clear().limit(lengths[i]);
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, offsets[i] + buffer.position()) < 0) {
                        throw new IOException(file + " is shorter than when it was indexed");
                    }
                }
                try (JsonParser row = JSON.createParser(buffer.array(), 0, lengths[i])) {
                    row.nextToken();
                    reader.read(row);
                }
            }
        }
    }
}
