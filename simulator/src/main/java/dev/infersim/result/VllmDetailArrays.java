package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-request arrays {@code vllm bench serve --save-detailed} puts in its result JSON, under vLLM's keys and in
 * its order: input_lens, output_lens, ttfts (seconds), itls (seconds; one list a request, the gaps between its content
 * chunks as vLLM records them, where infersim's own ITL statistics split a chunk of k tokens into k gaps),
 * generated_texts and errors. One entry per measured request, in request order as vLLM lists them; a failed request
 * has output length 0, TTFT 0, no ITLs, no text and its error message (its error type when the server sent no
 * message; "" for the others), as in vLLM.
 *
 * <p>The arrays are not in memory: each map value writes its array when the result is serialized, reading the run's
 * per-request JSONL file one row at a time, so a run of any length can have them. Add them to the result map only for
 * writing the result file.
 */
public final class VllmDetailArrays {
    /** vLLM's keys of the arrays, in its order. */
    public static final List<String> KEYS = Arrays.stream(Array.values()).map(a -> a.key).toList();

    private VllmDetailArrays() {
    }

    /** The six arrays, keyed as vLLM names them, read from the per-request file of a run. */
    public static Map<String, Object> of(Path requestLog) {
        RequestLogReader rows = new RequestLogReader(requestLog);
        Map<String, Object> arrays = new LinkedHashMap<>();
        for (Array a : Array.values()) {
            arrays.put(a.key, new Streamed(rows, a));
        }
        return arrays;
    }

    private enum Array {
        INPUT_LENS("input_lens"), OUTPUT_LENS("output_lens"), TTFTS("ttfts"), ITLS("itls"),
        GENERATED_TEXTS("generated_texts"), ERRORS("errors");

        final String key;

        Array(String key) {
            this.key = key;
        }

        /** Only the itls and texts need a row's long fields. */
        boolean needsStream() {
            return this == ITLS || this == GENERATED_TEXTS;
        }

        void write(RequestLogReader.Row row, JsonGenerator out) throws IOException {
            RequestRecord r = row.record();
            boolean failed = !r.succeeded();
            switch (this) {
                case INPUT_LENS -> out.writeNumber(r.promptTokens());
                case OUTPUT_LENS -> out.writeNumber(failed ? 0 : r.outputTokens());
                case TTFTS -> out.writeNumber(failed ? 0.0 : r.ttftNanos() / 1e9);
                case ITLS -> {
                    out.writeStartArray();
                    for (long gap : row.chunkGapNanos()) {
                        out.writeNumber(gap / 1e9);
                    }
                    out.writeEndArray();
                }
                case GENERATED_TEXTS -> {
                    String text = row.client() == null ? null : row.client().generatedText();
                    out.writeString(text == null ? "" : text);
                }
                case ERRORS -> out.writeString(!failed ? "" : r.error().isEmpty() && row.client() != null
                        && row.client().errorType() != null ? row.client().errorType() : r.error());
            }
        }
    }

    /** One array as a JSON value that writes itself from the file. */
    private record Streamed(RequestLogReader rows, Array array) implements JsonSerializable {
        @Override
        public void serialize(JsonGenerator out, SerializerProvider provider) throws IOException {
            out.writeStartArray();
            try {
                rows.forEach(array.needsStream(), row -> {
                    if (!row.warmup()) {
                        try {
                            array.write(row, out);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                });
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
            out.writeEndArray();
        }

        @Override
        public void serializeWithType(JsonGenerator out, SerializerProvider provider, TypeSerializer type)
                throws IOException {
            serialize(out, provider); // a plain JSON array: there is no type to record
        }
    }
}
