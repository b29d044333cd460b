package dev.infersim.server.api.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.profile.VisionEncoder;
import dev.infersim.server.json.Json;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.ImageParts;

import java.util.UUID;

/**
 * What vLLM's render endpoints answer for one prompt: its {@code GenerateRequest}
 * ({@code vllm/entrypoints/serve/disagg/protocol.py}; made by {@code ServingRender.render_completion_request} and
 * {@code render_chat_request}): {@code request_id} ({@code cmpl-} or {@code chatcmpl-} and a fresh UUID),
 * {@code token_ids}, {@code assistant_tokens_mask} and {@code token_offsets} (null: not asked), {@code features}
 * (null for a text-only prompt; a chat prompt's images otherwise, see {@link #features}), {@code sampling_params}, {@code model} as sent, {@code stream},
 * {@code stream_options} (only with stream), {@code cache_salt}, {@code priority}, {@code kv_transfer_params} (null).
 *
 * <p>{@code sampling_params} holds the SamplingParams fields that decide what the engine does, with the request's value
 * or vLLM's default ({@code to_sampling_params} with vLLM's {@code _DEFAULT_SAMPLING_PARAMS}): {@code max_tokens}
 * resolved as vLLM's {@code get_max_tokens} does (the request's, else completions' 16, else for chat what the context
 * leaves, never more than it leaves). vLLM writes more fields (logits processors, output kind, ...), which do not
 * change a mock's answer; {@code /inference/v1/generate} accepts the object back as it is.
 */
public final class RenderedRequest {
    private RenderedRequest() {
    }

    /**
     * The GenerateRequest of prompt {@code p} of {@code request} (parsed from {@code body}); {@code vision}: the
     * model's vision encoder, whose images give a chat render its {@code features}.
     */
    public static ObjectNode of(ObjectNode body, CompletionRequest request, int p, int maxModelLen, VisionEncoder vision,
                         String model) {
        int[] ids = request.prompts().get(p);
        ObjectNode g = Json.MAPPER.createObjectNode();
        g.put("request_id", (request.chat() ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", ""));
        ArrayNode tokens = g.putArray("token_ids");
        for (int id : ids) {
            tokens.add(id);
        }
        g.putNull("assistant_tokens_mask");
        g.putNull("token_offsets");
        g.set("features", request.chat() && vision != null ? features(body, ids, vision, model) : Json.MAPPER.nullNode());
        g.set("sampling_params", samplingParams(body, request, ids.length, maxModelLen));
        g.set("model", body.hasNonNull("model") ? body.get("model") : Json.MAPPER.nullNode());
        g.put("stream", request.stream());
        g.set("stream_options", request.stream() && body.hasNonNull("stream_options") ? body.get("stream_options")
                : Json.MAPPER.nullNode());
        g.set("cache_salt", body.hasNonNull("cache_salt") ? body.get("cache_salt") : Json.MAPPER.nullNode());
        g.put("priority", request.priority());
        g.putNull("kv_transfer_params");
        return g;
    }

    /**
     * vLLM's {@code MultiModalFeatures} of a chat prompt with images: per modality the items' hashes ({@code mm_hashes};
     * vLLM's are blake3 of the processed item, here SHA-256 of the image's bytes, or of a remote URL) and where each
     * item's tokens lie in {@code token_ids} ({@code mm_placeholders}: offset and length of its run of image tokens);
     * {@code kwargs_data} null, the metadata-only form (no tensors). Null for a prompt without images.
     */
    private static JsonNode features(ObjectNode body, int[] ids, VisionEncoder vision, String model) {
        ArrayNode hashes = Json.MAPPER.createArrayNode();
        JsonNode messages = body.get("messages");
        for (int m = 0; m < messages.size(); m++) {
            JsonNode content = messages.get(m).get("content");
            if (content != null && content.isArray()) {
                for (int i = 0; i < content.size(); i++) {
                    if ("image_url".equals(content.get(i).path("type").asText())) {
                        hashes.add(ImageParts.read(content.get(i), vision, model, "messages[" + m + "]").hash());
                    }
                }
            }
        }
        if (hashes.isEmpty()) {
            return Json.MAPPER.nullNode();
        }
        ObjectNode f = Json.MAPPER.createObjectNode();
        f.putObject("mm_hashes").set("image", hashes);
        ArrayNode ranges = f.putObject("mm_placeholders").putArray("image");
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == vision.imageTokenId()) {
                int start = i;
                while (i < ids.length && ids[i] == vision.imageTokenId()) {
                    i++;
                }
                ranges.addObject().put("offset", start).put("length", i - start);
            }
        }
        f.putNull("kwargs_data");
        return f;
    }

    private static ObjectNode samplingParams(ObjectNode body, CompletionRequest request, int promptTokens, int maxModelLen) {
        ObjectNode s = Json.MAPPER.createObjectNode();
        int room = maxModelLen - promptTokens;
        s.put("n", request.n());
        number(s, body, "presence_penalty", 0.0);
        number(s, body, "frequency_penalty", 0.0);
        number(s, body, "repetition_penalty", 1.0);
        number(s, body, "temperature", 1.0);
        number(s, body, "top_p", 1.0);
        s.put("top_k", body.path("top_k").isIntegralNumber() ? body.get("top_k").asInt() : 0);
        number(s, body, "min_p", 0.0);
        if (request.seed() == null) {
            s.putNull("seed");
        } else {
            s.put("seed", request.seed());
        }
        ArrayNode stop = s.putArray("stop");
        JsonNode given = body.get("stop");
        if (given != null && given.isTextual()) {
            stop.add(given.asText());
        } else if (given != null && given.isArray()) {
            given.forEach(stop::add);
        }
        s.putArray("stop_token_ids");
        s.put("ignore_eos", request.ignoreEos());
        s.put("max_tokens", request.maxTokens() == null ? room : Math.min(request.maxTokens(), room));
        s.put("min_tokens", request.minTokens());
        if (request.logprobs()) {
            s.put("logprobs", request.topLogprobs());
        } else {
            s.putNull("logprobs");
        }
        if (request.promptLogprobs() == null) {
            s.putNull("prompt_logprobs");
        } else {
            s.put("prompt_logprobs", request.promptLogprobs());
        }
        s.put("skip_special_tokens", body.path("skip_special_tokens").asBoolean(true));
        s.put("spaces_between_special_tokens", body.path("spaces_between_special_tokens").asBoolean(true));
        s.put("include_stop_str_in_output", body.path("include_stop_str_in_output").asBoolean(false));
        return s;
    }

    private static void number(ObjectNode s, ObjectNode body, String key, double otherwise) {
        s.put(key, body.path(key).isNumber() ? body.get(key).asDouble() : otherwise);
    }
}
