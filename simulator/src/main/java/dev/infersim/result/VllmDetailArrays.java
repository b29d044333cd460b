package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.util.NameTransformer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The per-request arrays {@code vllm bench serve --save-detailed} puts in its result JSON, under vLLM's keys and in
 * its order: input_lens, output_lens, ttfts (seconds), itls (seconds; one list a request, the gaps between its content
 * chunks as vLLM records them, where infersim's own ITL statistics split a chunk of k tokens into k gaps),
 * generated_texts and errors. One entry per measured request, in request order as vLLM lists them; a failed request
 * has output length 0, TTFT 0, no ITLs, no text and its error message (its error type when the server sent no
 * message; "" for the others), as in vLLM.
 *
 * <p>The arrays are not in memory: they are written when the result is serialized (a result holds them
 * {@code @JsonUnwrapped}, after its keys), reading the run's per-request JSONL file one row at a time, so a run of any
 * length can have them. Readers of a result leave them out ({@link ResultJson#readObject}): a result read back has
 * none.
 */
@JsonSerialize(using = VllmDetailArrays.Writer.class)
@JsonDeserialize(using = VllmDetailArrays.Skipped.class)
public final class VllmDetailArrays {
    /** vLLM's keys of the arrays, in its order. */
    public static final List<String> KEYS = Arrays.stream(Array.values()).map(a -> a.key).toList();

    private final RequestLogReader rows;

    private VllmDetailArrays(RequestLogReader rows) {
        this.rows = rows;
    }

    /** The six arrays of the per-request file of a run. */
    public static VllmDetailArrays of(Path requestLog) {
        return new VllmDetailArrays(new RequestLogReader(requestLog));
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

        /** This array, one entry per measured row of the file. */
        void writeArray(RequestLogReader rows, JsonGenerator out) throws IOException {
            out.writeStartArray();
            try {
                rows.forEach(needsStream(), row -> {
                    if (!row.warmup()) {
                        try {
                            write(row, out);
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
    }

    /** A result read back has no arrays: they are the per-request file's, which its reader reads instead. */
    static final class Skipped extends JsonDeserializer<VllmDetailArrays> {
        @Override
        public VllmDetailArrays deserialize(JsonParser in, DeserializationContext context) throws IOException {
            in.skipChildren();
            return null;
        }
    }

    /** Writes the six keys and their arrays into the enclosing result object. */
    static final class Writer extends UnwrappingWriter<VllmDetailArrays> {
        @Override
        void write(VllmDetailArrays arrays, JsonGenerator out, NameTransformer names) throws IOException {
            for (Array a : Array.values()) {
                out.writeFieldName(names.transform(a.key));
                a.writeArray(arrays.rows, out);
            }
        }
    }
}
