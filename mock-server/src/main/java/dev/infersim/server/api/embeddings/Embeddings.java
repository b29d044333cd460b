package dev.infersim.server.api.embeddings;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.SplitMix64;
import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.request.CompletionRequest;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

/**
 * {@code POST /v1/embeddings} of a pooling model ({@code serve --runner pooling}), as vLLM serves it (vLLM main at
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c, {@code vllm/entrypoints/pooling/embed/}): {@code input} a string, a list of
 * strings, token ids or lists of token ids; {@code encoding_format} float or base64 (little-endian float32, as the
 * OpenAI clients decode it); {@code dimensions} refused, the bundled models not being Matryoshka models. Each input is
 * an engine request that prefills its prompt and finishes in the step that completes the prefill, with no decode step
 * (one sampled position, which the engine counts as one output token). The vector is as wide as the model's hidden
 * size, L2-normalised (vLLM's default activation), and a pure function of the input's token ids, so the same text
 * always embeds the same.
 */
public final class Embeddings {
    private Embeddings() {
    }

    /** The completions request that times an embeddings request, and the embeddings format of its answer. */
    public static Wire.Translation translate(ObjectNode body, ModelService service) {
        JsonNode input = body.get("input");
        if (input == null || input.isNull()) {
            throw ApiException.badRequest("input", "input: Field required");
        }
        String format = body.path("encoding_format").asText("float");
        if (!format.equals("float") && !format.equals("base64")) {
            throw ApiException.badRequest("encoding_format", "encoding_format: Input should be 'float' or 'base64'");
        }
        if (body.hasNonNull("dimensions")) {
            throw ApiException.badRequest("dimensions", "Model \"" + service.options.servedModelName() + "\" does not support "
                    + "matryoshka representation, changing output dimensions will lead to poor results.");
        }
        ObjectNode completion = Json.MAPPER.createObjectNode();
        if (body.has("model")) {
            completion.set("model", body.get("model"));
        }
        completion.set("prompt", input);
        completion.put("max_tokens", 1);
        completion.put("ignore_eos", true);
        for (String key : new String[] {"priority", "user", "infersim"}) {
            if (body.hasNonNull(key)) {
                completion.set(key, body.get(key));
            }
        }
        int dimensions = service.options.deployment().model().hiddenSize();
        return new Wire.Translation(completion, false, new EmbeddingsWire(format.equals("base64"), dimensions));
    }

    /** A unit vector of {@code dimensions} drawn from the prompt's token ids. */
    public static float[] vector(int[] prompt, int dimensions) {
        long seed = 0x5EEDL;
        for (int id : prompt) {
            seed = SplitMix64.mix64(seed ^ id);
        }
        float[] v = new float[dimensions];
        double norm = 0;
        for (int k = 0; k < dimensions; k++) {
            v[k] = (float) (SplitMix64.uniformAt(seed, k) * 2 - 1);
            norm += (double) v[k] * v[k];
        }
        float scale = (float) (1 / Math.sqrt(norm));
        for (int k = 0; k < dimensions; k++) {
            v[k] *= scale;
        }
        return v;
    }

    private record EmbeddingsWire(boolean base64, int dimensions) implements Wire {
        @Override
        public String id(CompletionRequest request, String requestId) {
            return "embd-" + requestId;
        }

        @Override
        public Stream stream(ResponseContext response) {
            throw new IllegalStateException("embeddings are never streamed");
        }

        @Override
        public Body body(ResponseContext response) {
            return new Body() {
                @Override
                public void write(ByteBuf out) {
                    Json.write(out, g -> writeBody(g, response));
                }

                /** 999 inputs of a 4096-wide model make a 50 MB body: a worker thread writes it, as the client reads. */
                @Override
                public long estimatedBytes() {
                    return 256 + (long) response.choices().length * (64 + (base64 ? 6L : 12L) * dimensions);
                }

                @Override
                public void write(OutputStream out) throws IOException {
                    Json.write(out, g -> writeBody(g, response));
                }
            };
        }

        private void writeBody(JsonGenerator g, ResponseContext response) throws IOException {
            g.writeStartObject();
            response.writeIdentity(g, "list");
            g.writeArrayFieldStart("data");
            long prompt = 0;
            for (Choice c : response.choices()) {
                prompt += c.request.promptTokens();
                float[] v = vector(c.request.promptTokenIds(), dimensions);
                g.writeStartObject();
                g.writeNumberField("index", c.index);
                g.writeStringField("object", "embedding");
                if (base64) {
                    ByteBuffer bytes = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
                    bytes.asFloatBuffer().put(v);
                    g.writeStringField("embedding", Base64.getEncoder().encodeToString(bytes.array()));
                } else {
                    g.writeArrayFieldStart("embedding");
                    for (float x : v) {
                        g.writeNumber(x);
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("usage");
            g.writeNumberField("prompt_tokens", prompt);
            g.writeNumberField("total_tokens", prompt);
            g.writeNumberField("completion_tokens", 0);
            g.writeNullField("prompt_tokens_details");
            g.writeEndObject();
            response.truth().writeField(g);
            g.writeEndObject();
        }
    }
}
