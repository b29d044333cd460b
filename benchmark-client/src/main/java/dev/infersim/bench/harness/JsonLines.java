package dev.infersim.bench.harness;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A JSON Lines file open for reading (through gunzip when its name ends in .gz), as the harnesses' per-request files
 * and the mock's truth log are written: {@link #next} gives each non-blank line's value in turn. A line that is not
 * JSON stops the read with one line saying which file, what it was taken for, and where.
 */
final class JsonLines implements Closeable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final BufferedReader in;
    private final String named;
    private final String expected;
    private int lineNo;

    /**
     * @param named    how messages name the file (its path, or the flag that gave it and its path)
     * @param expected what the file was taken for, as in "not {@code expected}"
     */
    JsonLines(Path file, String named, String expected) throws IOException {
        this.in = HarnessResults.open(file);
        this.named = named;
        this.expected = expected;
    }

    /** The next line's value, or null at the end of the file. */
    JsonNode next() throws IOException {
        String line;
        do {
            line = in.readLine();
            if (line == null) {
                return null;
            }
            lineNo++;
        } while (line.isBlank());
        try {
            return JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new ConfigException(named + ": not " + expected + " (invalid JSON at line " + lineNo + ": "
                    + e.getOriginalMessage() + ")");
        }
    }

    /** The line of the value {@link #next} gave last, from 1. */
    int lineNo() {
        return lineNo;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
