package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.JsonSyntax;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The JSON plumbing of every result file: one Jackson mapper (pretty-printed as vLLM's files are read by people, numbers
 * as Java writes doubles), writing a typed result whole or not at all ({@link OutputFile}), and reading one back into
 * the same types. A result is one flat JSON object whose keys belong to several typed parts (vLLM's run keys, its
 * totals, the latency keys, each producer's {@code infersim_} keys): each part is written with
 * {@code @JsonUnwrapped} and read back from the same object by {@link #part}, which ignores the keys of the others.
 */
public final class ResultJson {
    /** vLLM's per-request arrays and a sweep's per-point results ({@code runs}): left out by {@link #readObject}. */
    private static final Set<String> BULKY = Stream.concat(VllmDetailArrays.KEYS.stream(), Stream.of("runs"))
            .collect(Collectors.toUnmodifiableSet());

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private ResultJson() {
    }

    /** The mapper results are written and read with. */
    public static ObjectMapper mapper() {
        return JSON;
    }

    /** Writes {@code result} as pretty-printed JSON, creating parent directories; whole or not at all. */
    public static void write(Path file, Object result) {
        OutputFile.write(file, out -> JSON.writeValue(out, result));
    }

    /** The JSON text of {@code result}, as {@link #write} writes it. */
    public static String text(Object result) {
        try {
            return JSON.writeValueAsString(result);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code result} as a JSON tree, its keys in the order they are written. */
    public static ObjectNode tree(Object result) {
        return JSON.valueToTree(result);
    }

    /**
     * Reads a result file's top-level object, leaving out vLLM's per-request arrays (and a sweep's per-point results,
     * which carry them too): they can hold millions of entries, and readers take per-request values from the detail
     * files instead. Throws {@link UncheckedIOException} with one line naming the file and what is wrong.
     */
    public static ObjectNode readObject(Path file) {
        return readObject(file, BULKY);
    }

    /** Reads a result file's top-level object whole, vLLM's per-request arrays included. */
    public static ObjectNode readWhole(Path file) {
        return readObject(file, Set.of());
    }

    private static ObjectNode readObject(Path file, Set<String> skipped) {
        try (JsonParser p = JSON.createParser(file.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new UncheckedIOException(file + ": not a result JSON (not a JSON object)",
                        new IOException("not a JSON object"));
            }
            ObjectNode result = JSON.createObjectNode();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (skipped.contains(key)) {
                    p.skipChildren();
                } else {
                    result.set(key, JSON.readTree(p));
                }
            }
            return result;
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(file + JsonSyntax.location(e) + ": malformed JSON: " + JsonSyntax.reason(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read result " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * A result file read back as {@code type}, without vLLM's per-request arrays ({@link #readObject}). Throws
     * {@link UncheckedIOException} with one line naming the file and what is wrong.
     */
    public static <T> T read(Path file, JavaType type) {
        return read(file, readObject(file), type);
    }

    /** {@code flat}, the object {@link #readObject} read from {@code file}, as {@code type}; errors as {@link #read}. */
    public static <T> T read(Path file, ObjectNode flat, JavaType type) {
        try {
            return JSON.treeToValue(flat, type);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(file + ": not a result of this kind: " + JsonSyntax.reason(e), e);
        }
    }

    /** A result file read back as {@code type}; see {@link #read(Path, JavaType)}. */
    public static <T> T read(Path file, Class<T> type) {
        return read(file, JSON.constructType(type));
    }

    /** The part of a flat result object that {@code type} holds; keys of other parts are ignored. */
    public static <T> T part(JsonNode flat, Class<T> type) {
        return convert(flat, type);
    }

    /**
     * The part of a flat result object written with {@code @JsonUnwrapped(prefix = prefix)}: its keys that start with
     * the prefix, without it.
     */
    public static <T> T part(JsonNode flat, String prefix, Class<T> type) {
        ObjectNode unprefixed = JSON.createObjectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = flat.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().startsWith(prefix)) {
                unprefixed.set(e.getKey().substring(prefix.length()), e.getValue());
            }
        }
        return convert(unprefixed, type);
    }

    /** One value of a result read as {@code type} (null for a missing or null value). */
    public static <T> T convert(JsonNode value, Class<T> type) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return null;
        }
        try {
            return JSON.treeToValue(value, type);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("not a result of this kind: " + JsonSyntax.reason(e), e);
        }
    }
}
