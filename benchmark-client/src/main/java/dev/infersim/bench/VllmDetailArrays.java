package dev.infersim.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;

import java.io.IOException;
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
    static final List<String> KEYS = Arrays.stream(Array.values()).map(a -> a.key).toList();

    private VllmDetailArrays() {
    }

    /** The six arrays, keyed as vLLM names them, read from the per-request file of a run. */
    public static Map<String, Object> of(Path requestLog) {
        RequestLogRows rows = new RequestLogRows(requestLog);
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

        void write(Row r, JsonGenerator out) throws IOException {
            switch (this) {
                case INPUT_LENS -> out.writeNumber(r.inputLen);
                case OUTPUT_LENS -> out.writeNumber(r.failed ? 0 : r.outputLen);
                case TTFTS -> out.writeNumber(r.failed ? 0.0 : r.ttftMs / 1e3);
                case ITLS -> {
                    out.writeStartArray();
                    for (int i = 0; i < r.gaps; i++) {
                        out.writeNumber(r.gapsMs[i] / 1e3);
                    }
                    out.writeEndArray();
                }
                case GENERATED_TEXTS -> out.writeString(r.text);
                case ERRORS -> out.writeString(r.failed && r.error.isEmpty() ? r.errorType : r.error);
            }
        }
    }

    /** One array as a JSON value that writes itself from the file. */
    private record Streamed(RequestLogRows rows, Array array) implements JsonSerializable {
        @Override
        public void serialize(JsonGenerator out, SerializerProvider provider) throws IOException {
            Row row = new Row();
            out.writeStartArray();
            rows.forEach(parser -> {
                row.read(parser, array);
                if (!row.warmup) {
                    array.write(row, out);
                }
            });
            out.writeEndArray();
        }

        @Override
        public void serializeWithType(JsonGenerator out, SerializerProvider provider, TypeSerializer type)
                throws IOException {
            serialize(out, provider); // a plain JSON array: there is no type to record
        }
    }

    /** The fields of one JSONL row an array needs; chunk gaps and text, the long ones, are read only for their own. */
    private static final class Row {
        int inputLen;
        int outputLen;
        double ttftMs;
        boolean failed;
        /** The simulator's file also holds its warmups, marked so; vLLM's arrays leave them out. */
        boolean warmup;
        String errorType;
        String error;
        String text;
        double[] gapsMs = new double[256];
        int gaps;

        void read(JsonParser p, Array array) throws IOException {
            inputLen = 0;
            outputLen = 0;
            ttftMs = 0;
            failed = false;
            warmup = false;
            errorType = "";
            error = "";
            text = "";
            gaps = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "input_len" -> inputLen = p.getIntValue();
                    case "output_len" -> outputLen = p.getIntValue();
                    case "ttft_ms" -> ttftMs = p.getDoubleValue();
                    case "warmup" -> warmup = p.getBooleanValue();
                    case "error_type" -> {
                        failed = true;
                        errorType = p.getText();
                    }
                    case "error" -> {
                        failed = true; // the simulator's rows name no error type
                        error = p.getValueAsString("");
                    }
                    case "chunk_gaps_ms" -> {
                        if (array == Array.ITLS) {
                            readGaps(p);
                        } else if (array == Array.GENERATED_TEXTS) {
                            p.skipChildren();
                        } else {
                            return; // RequestLog writes the long fields last: nothing else in this row is needed
                        }
                    }
                    case "generated_text" -> text = p.getText();
                    default -> p.skipChildren();
                }
            }
        }

        private void readGaps(JsonParser p) throws IOException {
            while (p.nextToken() != JsonToken.END_ARRAY) {
                if (gaps == gapsMs.length) {
                    gapsMs = Arrays.copyOf(gapsMs, 2 * gaps);
                }
                gapsMs[gaps++] = p.getDoubleValue();
            }
        }
    }
}
