package dev.infersim.server.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/** The server's one Jackson mapper, and streaming writers for the responses it builds. */
public final class Json {
    /**
     * Field names are neither interned nor canonicalized: a body's names are a client's, and a schema of 100,000
     * distinct property names took three to six times as long to read with them (every name through String.intern and
     * a growing symbol table) as without; a body of a few known names costs a few short strings more.
     */
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .disable(JsonFactory.Feature.INTERN_FIELD_NAMES).disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES).build());

    private Json() {
    }

    /** A generator appending UTF-8 JSON to {@code out}; closing it flushes and leaves the buffer open. */
    static JsonGenerator generator(ByteBuf out) {
        return generator(new ByteBufOutputStream(out));
    }

    static JsonGenerator generator(OutputStream out) {
        try {
            return MAPPER.getFactory().createGenerator(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The UTF-8 contents of a JSON string literal for {@code s}, without the quotes, as the generator escapes it. */
    public static byte[] escapedUtf8(String s) {
        return JsonStringEncoder.getInstance().quoteAsUTF8(s);
    }

    /** What a JSON writer does; generators only throw on I/O, which writing into memory never does. */
    public interface Writer {
        void write(JsonGenerator g) throws IOException;
    }

    /** Writing into memory, where a generator's IOException cannot happen. */
    public interface InMemory {
        void run() throws IOException;
    }

    public static void inMemory(InMemory write) {
        try {
            write.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code writer} on a generator over {@code out} and flushes it into {@code out}, which stays open. */
    public static void write(OutputStream out, Writer writer) throws IOException {
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)) {
            writer.write(g);
        }
    }

    /** A named server-sent event, {@code event: TYPE\ndata: {...}\n\n}, its object's fields written by {@code fields}. */
    public static void event(ByteBuf out, String type, Writer fields) {
        out.writeCharSequence("event: " + type + "\ndata: ", java.nio.charset.StandardCharsets.UTF_8);
        write(out, g -> {
            g.writeStartObject();
            fields.write(g);
            g.writeEndObject();
        });
        out.writeCharSequence("\n\n", java.nio.charset.StandardCharsets.UTF_8);
    }

    /** {@link #event(ByteBuf, String, Writer)} written into a stream, by a worker thread. */
    public static void event(OutputStream out, String type, Writer fields) throws IOException {
        out.write(("event: " + type + "\ndata: ").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        write(out, g -> {
            g.writeStartObject();
            fields.write(g);
            g.writeEndObject();
        });
        out.write(EVENT_END);
    }

    private static final byte[] EVENT_END = {'\n', '\n'};

    /** The bytes {@code node} takes as compact JSON, counted as they are generated (nothing is kept). */
    public static long serializedBytes(com.fasterxml.jackson.databind.JsonNode node) {
        long[] count = {0};
        OutputStream counter = new OutputStream() {
            @Override
            public void write(int b) {
                count[0]++;
            }

            @Override
            public void write(byte[] b, int off, int len) {
                count[0] += len;
            }
        };
        inMemory(() -> write(counter, g -> g.writeTree(node)));
        return count[0];
    }

    /** Runs {@code writer} on a generator over {@code out}, then flushes it. */
    public static void write(ByteBuf out, Writer writer) {
        try (JsonGenerator g = generator(out)) {
            writer.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
