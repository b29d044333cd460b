package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * vLLM's checks of sampling fields whose effect the mock does not model: a request vLLM refuses is refused here with
 * the same status (400) and vLLM's message, so a gateway sees the same answer; an accepted one changes nothing.
 */
final class SamplingChecks {
    /** vLLM's default --max-logprobs. */
    static final int MAX_LOGPROBS = 20;

    private SamplingChecks() {
    }

    /** best_of: at least n (vLLM's SamplingParams), and above 1 refused as the V1 engine does not sample extra sequences. */
    static void bestOf(ObjectNode body, int n) {
        Integer bestOf = RequestParser.optInt(body, "best_of", 1, Integer.MAX_VALUE);
        if (bestOf == null) {
            return;
        }
        if (bestOf < n) {
            throw ApiException.badRequest(null, "best_of must be greater than or equal to n, got n=" + n + " and best_of=" + bestOf + ".");
        }
        if (bestOf > 1) {
            throw ApiException.badRequest(null, "vLLM V1 does not yet support best_of.");
        }
    }

    /**
     * Chat top_logprobs: an integer, -1 (the whole vocabulary) or from 0, above 0 only with logprobs; then held to
     * max-logprobs as vLLM's engine holds it. Returns it (0 when absent).
     */
    static int topLogprobs(ObjectNode body, boolean logprobs) {
        JsonNode v = body.get("top_logprobs");
        if (v == null || v.isNull()) {
            return 0;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw ApiException.badRequest("top_logprobs", "`top_logprobs` must be an integer.");
        }
        int k = v.asInt();
        if (k < -1) {
            throw ApiException.badRequest("top_logprobs", "`top_logprobs` must be a positive value or -1.");
        }
        if ((k == -1 || k > 0) && !logprobs) {
            throw ApiException.badRequest("top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.");
        }
        return logprobs ? sampleLogprobs(k) : k;
    }

    /**
     * Logprobs asked per output token (-1: the whole vocabulary) held to max-logprobs. vLLM names parameter and value
     * in this error, and its message is the exception's text, which appends both.
     */
    static int sampleLogprobs(int k) {
        int requested = k == -1 ? PromptTokenizer.VOCABULARY_SIZE : k;
        if (requested > MAX_LOGPROBS) {
            throw overMax("logprobs", "sample", requested);
        }
        return k;
    }

    /**
     * prompt_logprobs: an integer, 0..max-logprobs or -1 (the whole vocabulary, which exceeds max-logprobs), and none
     * above 0 in a stream; returns it, or null when absent.
     */
    static Integer promptLogprobs(ObjectNode body, boolean stream) {
        JsonNode v = body.get("prompt_logprobs");
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw ApiException.badRequest("prompt_logprobs", "`prompt_logprobs` must be an integer.");
        }
        int k = v.asInt();
        if (stream && (k > 0 || k == -1)) {
            throw ApiException.badRequest("prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.");
        }
        if (k < -1) {
            throw ApiException.badRequest("prompt_logprobs", "`prompt_logprobs` must be a positive value or -1.");
        }
        if (k == -1 || k > MAX_LOGPROBS) {
            throw overMax("prompt_logprobs", "prompt", k == -1 ? PromptTokenizer.VOCABULARY_SIZE : k);
        }
        return k;
    }

    /** vLLM's refusal of more logprobs than --max-logprobs, with the parameter and value its message appends. */
    private static ApiException overMax(String param, String kind, int requested) {
        return ApiException.badRequest(param, "Requested " + kind + " logprobs of " + requested
                + ", which is greater than max allowed: " + MAX_LOGPROBS + " (parameter=" + param + ", value=" + requested + ")");
    }

    /** logit_bias: an object from token ids (as strings) to numbers, every id inside the vocabulary. */
    static void logitBias(ObjectNode body, PromptTokenizer tokenizer) {
        JsonNode v = body.get("logit_bias");
        if (v == null || v.isNull()) {
            return;
        }
        if (!v.isObject()) {
            throw ApiException.badRequest("logit_bias", "logit_bias: expected an object of token ids to biases, got "
                    + RequestParser.describe(v));
        }
        List<Integer> outside = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isNumber()) {
                throw ApiException.badRequest("logit_bias", "logit_bias: expected a number for token " + e.getKey() + ", got "
                        + RequestParser.describe(e.getValue()));
            }
            int id;
            try {
                id = Integer.parseInt(e.getKey().trim());
            } catch (NumberFormatException notAnId) {
                throw ApiException.badRequest("logit_bias", "Found token_id `" + e.getKey()
                        + "` in logit_bias but token_id must be an integer or string representing an integer");
            }
            if (!tokenizer.isKnown(id)) {
                outside.add(id);
            }
        }
        if (!outside.isEmpty()) {
            throw ApiException.badRequest("logit_bias", "token_id(s) " + outside + " in logit_bias contain out-of-vocab token ids. "
                    + "Vocabulary size: " + PromptTokenizer.VOCABULARY_SIZE + " (parameter=logit_bias, value=" + outside + ")");
        }
    }
}
