package dev.infersim.server.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.json.PyFloat;
import dev.infersim.server.text.PromptTokenizer;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * vLLM's checks of sampling fields whose effect the mock does not model (SamplingParams' {@code _verify_args} and
 * {@code verify} in sampling_params.py, and the OpenAI layer's logprobs checks): a request vLLM refuses is refused
 * here with the same status (400), message and param, so a client or gateway meets the same refusals as on a real
 * server; an accepted one changes nothing. A wrong JSON type is refused earlier, as vLLM's pydantic model does.
 */
final class SamplingChecks {
    /** vLLM's default --max-logprobs. */
    static final int MAX_LOGPROBS = 20;
    /** vLLM's default VLLM_MAX_N_SEQUENCES. */
    static final int MAX_N = 16384;
    /** vLLM treats a temperature below this as greedy sampling. */
    private static final double SAMPLING_EPS = 1e-5;

    private SamplingChecks() {
    }

    /** n: 1..VLLM_MAX_N_SEQUENCES; returns it (1 when absent). */
    static int n(JsonFields fields) {
        Integer n = fields.optInt("n", Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (n == null) {
            return 1;
        }
        if (n < 1) {
            throw ApiException.badRequest(null, "n must be at least 1, got " + n + ".");
        }
        if (n > MAX_N) {
            throw ApiException.badRequest(null, "n must be at most " + MAX_N + ", got " + n
                    + ". To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.");
        }
        return n;
    }

    /** Greedy sampling (temperature 0) has one answer, so vLLM refuses to return several. */
    static void greedy(Double temperature, int n) {
        if (temperature != null && temperature < SAMPLING_EPS && n > 1) {
            throw ApiException.badRequest(null, "n must be 1 when using greedy sampling, got " + n + ".");
        }
    }

    static void penalties(JsonFields fields) {
        for (String field : new String[] {"presence_penalty", "frequency_penalty"}) {
            Double p = fields.optNumber(field, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
            if (p != null && !(p >= -2 && p <= 2)) {
                throw ApiException.badRequest(null, field + " must be in [-2, 2], got " + PyFloat.repr(p) + ".");
            }
        }
        Double r = fields.optNumber("repetition_penalty", Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        if (r != null && !Double.isFinite(r)) {
            throw ApiException.badRequest(null, "repetition_penalty must be a finite number, got " + PyFloat.repr(r) + ".");
        }
        if (r != null && r <= 0) {
            throw ApiException.badRequest(null, "repetition_penalty must be greater than zero, got " + PyFloat.repr(r) + ".");
        }
    }

    /** top_k: 0 (or -1, which vLLM quietly takes as 0) disables it, else at least 1; min_p within [0, 1]. */
    static void topKMinP(JsonFields fields) {
        Integer k = fields.optInt("top_k", Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (k != null && k < -1) {
            throw ApiException.badRequest(null, "top_k must be 0 (disable), or at least 1, got " + k + ".");
        }
        Double minP = fields.optNumber("min_p", Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        if (minP != null && !(minP >= 0 && minP <= 1)) {
            throw ApiException.badRequest(null, "min_p must be in [0, 1], got " + PyFloat.repr(minP) + ".");
        }
    }

    /**
     * allowed_token_ids: a non-empty list of ids inside the vocabulary. vLLM names the parameter and value of these
     * errors, and its error message carries both, as Python prints them.
     */
    static void allowedTokenIds(JsonFields fields) {
        JsonNode v = fields.given("allowed_token_ids");
        if (v == null) {
            return;
        }
        String field = "allowed_token_ids";
        if (!v.isArray()) {
            throw fields.wrongType(field, "a list of token ids", v);
        }
        if (v.isEmpty()) {
            throw ApiException.badRequest(field, "allowed_token_ids is not None and empty! (parameter=allowed_token_ids, value=[])");
        }
        List<Long> outside = new ArrayList<>();
        for (JsonNode id : v) {
            if (!id.isIntegralNumber() || !id.canConvertToLong()) {
                throw ApiException.badRequest(field, field + ": expected integer token ids, got an item " + JsonFields.describe(id));
            }
            if (id.asLong() < 0 || id.asLong() >= PromptTokenizer.VOCABULARY_SIZE) {
                outside.add(id.asLong());
            }
        }
        if (!outside.isEmpty()) {
            throw ApiException.badRequest(field, "allowed_token_ids contains out-of-vocab token id! (parameter=allowed_token_ids, value="
                    + outside + ")");
        }
    }

    /** best_of: at least n (vLLM's SamplingParams), and above 1 refused as the V1 engine does not sample extra sequences. */
    static void bestOf(JsonFields fields, int n) {
        Integer bestOf = fields.optInt("best_of", 1, Integer.MAX_VALUE);
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
    static int topLogprobs(JsonFields fields, boolean logprobs) {
        JsonNode v = fields.given("top_logprobs");
        if (v == null) {
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
    static Integer promptLogprobs(JsonFields fields, boolean stream) {
        JsonNode v = fields.given("prompt_logprobs");
        if (v == null) {
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
    static void logitBias(JsonFields fields, PromptTokenizer tokenizer) {
        JsonNode v = fields.given("logit_bias");
        if (v == null) {
            return;
        }
        if (!v.isObject()) {
            throw fields.wrongType("logit_bias", "an object of token ids to biases", v);
        }
        List<Integer> outside = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isNumber()) {
                throw ApiException.badRequest("logit_bias", "logit_bias: expected a number for token " + e.getKey() + ", got "
                        + JsonFields.describe(e.getValue()));
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
