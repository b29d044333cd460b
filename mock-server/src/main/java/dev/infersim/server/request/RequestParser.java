package dev.infersim.server.request;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.LoraAdapter;
import dev.infersim.engine.profile.VisionEncoder;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.engine.LoraAdapters;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.output.OutputSpec;
import dev.infersim.server.output.StopStrings;
import dev.infersim.server.text.PromptTokenizer;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Validates OpenAI request bodies field by field, as vLLM's pydantic models do: a wrong type or range is a 400 whose
 * message and {@code param} name the field; an unknown model is a 404; a prompt that cannot fit max-model-len is a 400
 * with vLLM's context-length message. Fields vLLM declares but infersim does not use are type-checked
 * ({@link DeclaredFields}); unknown fields are ignored.
 */
public final class RequestParser {
    /** vLLM's completions max_tokens when the request gives none (chat instead takes what the context leaves). */
    static final int DEFAULT_COMPLETION_MAX_TOKENS = 16;

    private final PromptTokenizer tokenizer;
    private final List<String> servedModelNames;
    private final LoraAdapters loras;
    private final int maxModelLen;
    private final boolean priorityScheduling;
    private final ModelFeatures features;
    private final VisionEncoder vision;

    RequestParser(PromptTokenizer tokenizer, List<String> servedModelNames, LoraAdapters loras, int maxModelLen,
                  boolean priorityScheduling) {
        this(tokenizer, servedModelNames, loras, maxModelLen, priorityScheduling, ModelFeatures.NONE);
    }

    RequestParser(PromptTokenizer tokenizer, List<String> servedModelNames, LoraAdapters loras, int maxModelLen,
                  boolean priorityScheduling, ModelFeatures features) {
        this(tokenizer, servedModelNames, loras, maxModelLen, priorityScheduling, features, null);
    }

    /** {@code vision}: the model's vision encoder, which sizes the image parts of chat messages; null for a text model. */
    public RequestParser(PromptTokenizer tokenizer, List<String> servedModelNames, LoraAdapters loras, int maxModelLen,
                  boolean priorityScheduling, ModelFeatures features, VisionEncoder vision) {
        this.vision = vision;
        this.features = features;
        this.tokenizer = tokenizer;
        this.servedModelNames = servedModelNames;
        this.loras = loras;
        this.maxModelLen = maxModelLen;
        this.priorityScheduling = priorityScheduling;
    }

    private static final ObjectReader STRICT = Json.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /**
     * Parses a JSON object body; 400 when it is not one, as a strict JSON server answers: bytes that are not UTF-8
     * (overlong forms, encoded surrogates, code points above U+10FFFF, which a lenient decoder silently turns into other
     * characters) and anything but whitespace after the object are refused.
     */
    public static ObjectNode object(byte[] body) {
        int invalid = invalidUtf8At(body);
        if (invalid >= 0) {
            throw ApiException.badRequest(null, "Invalid JSON body: not valid UTF-8 at byte " + invalid);
        }
        JsonNode node;
        try {
            node = STRICT.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiException.badRequest(null, "Invalid JSON body: " + jsonError(e));
        } catch (java.io.IOException e) {
            throw ApiException.badRequest(null, "Invalid JSON body: unreadable");
        }
        if (node == null || !node.isObject()) {
            throw ApiException.badRequest(null, "The request body must be a JSON object");
        }
        return (ObjectNode) node;
    }

    private static final Pattern START_MARKER = Pattern.compile("\\s*\\(start marker at \\[Source: .*?; line: (\\d+), column: (\\d+)\\]\\)");
    private static final Pattern CONSTRAINT = Pattern.compile(",? from `[^`]*`");
    private static final Pattern TOKEN = Pattern.compile("\\b(START_OBJECT|END_OBJECT|START_ARRAY|END_ARRAY|FIELD_NAME|VALUE_[A-Z_]+|NOT_AVAILABLE)\\b");

    /**
     * What is wrong with a body that is not JSON, and where, in the terms of JSON rather than of the parser: Jackson's
     * token names, its location dumps and the names of its limit settings are taken out (a client needs none of them,
     * and they tell a prober which parser and version it is talking to).
     */
    static String jsonError(JsonProcessingException e) {
        String what = e.getOriginalMessage() == null ? "malformed JSON" : e.getOriginalMessage();
        what = START_MARKER.matcher(what).replaceAll(" (opened at line $1, column $2)");
        what = CONSTRAINT.matcher(what).replaceAll("");
        what = TOKEN.matcher(what).replaceAll(m -> m.group(1).toLowerCase(Locale.ROOT).replace("value_", "").replace('_', ' '));
        if (what.contains("`") || what.contains("Source") || what.contains("com.fasterxml") || what.contains("\n")) {
            what = "malformed JSON";
        }
        JsonLocation at = e.getLocation();
        return at == null || at.getLineNr() < 1 ? what : what + " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
    }

    /** Offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629), or -1 when all do. */
    static int invalidUtf8At(byte[] bytes) {
        CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder(); // reports malformed input rather than replacing it
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer scratch = CharBuffer.allocate(4096);
        while (true) {
            CoderResult r = strict.decode(in, scratch, true);
            if (r.isError()) {
                return in.position();
            }
            if (r.isUnderflow()) {
                return -1;
            }
            scratch.clear();
        }
    }

    /**
     * The LoRA adapter {@code model} names, or null for the base model (absent or a served name); 404 for any other
     * name, as vLLM's model check.
     */
    public LoraAdapter checkModel(ObjectNode body) {
        String model = JsonFields.of(body).optString("model");
        if (model == null || servedModelNames.contains(model)) {
            return null;
        }
        LoraAdapters.Entry adapter = loras == null ? null : loras.find(model);
        if (adapter == null) {
            throw new ApiException(404, "The model `" + model + "` does not exist.", "model");
        }
        return adapter.adapter();
    }

    public CompletionRequest parse(ObjectNode body, boolean chat) {
        JsonFields fields = JsonFields.of(body);
        LoraAdapter lora = checkModel(body);
        List<int[]> prompts = new ArrayList<>();
        List<int[]> echo = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        boolean echoPrompt = false;
        String echoMessage = null;
        boolean chatEcho = false;
        if (chat) {
            List<PromptTokenizer.Message> messages = messages(body);
            chatEcho = fields.optBool("echo", false);
            echoMessage = chatEcho ? ChatEcho.text(messages) : null;
            // a prompt longer than the context is refused, whatever its length: tokenizing stops past the context, and
            // nothing else of the conversation is tokenized
            int[] prompt = tokenizer.applyChatTemplate(messages, templateEnding(body), maxModelLen);
            if (prompt.length > maxModelLen) {
                checkContext(prompt.length, null, true);
            }
            prompts.add(prompt);
            String lastUser = "";
            for (PromptTokenizer.Message m : messages) {
                if (m.role().equals("user")) {
                    lastUser = m.content();
                }
            }
            echo.add(tokenizer.encode(lastUser.isEmpty() ? messages.get(messages.size() - 1).content() : lastUser, maxModelLen));
        } else {
            // vLLM serves no fill-in-the-middle: any suffix, even "", is refused before the prompt is looked at.
            if (fields.optString("suffix") != null) {
                throw ApiException.badRequest(null, "suffix is not currently supported");
            }
            for (int[] p : prompts(body, texts)) {
                prompts.add(p);
                echo.add(p);
            }
            echoPrompt = fields.optBool("echo", false);
        }
        // max_tokens 0 is vLLM's way to score a prompt: allowed with echo only.
        Integer maxTokens = fields.optInt(chat ? "max_completion_tokens" : "max_tokens", echoPrompt ? 0 : 1, Integer.MAX_VALUE);
        if (maxTokens == null) {
            maxTokens = fields.optInt("max_tokens", 1, Integer.MAX_VALUE);
        }
        if (maxTokens == null && !chat) {
            maxTokens = DEFAULT_COMPLETION_MAX_TOKENS;
        }
        Integer minTokens = fields.optInt("min_tokens", 0, Integer.MAX_VALUE);
        int min = minTokens == null ? 0 : minTokens;
        for (int[] p : prompts) {
            checkContext(p.length, maxTokens, chat);
            // Without max_tokens, vLLM takes what the context leaves and holds min_tokens to that as well.
            int max = maxTokens != null ? Math.max(1, maxTokens) : maxModelLen - p.length;
            if (min > max) {
                throw ApiException.badRequest("min_tokens", "min_tokens must be less than or equal to max_tokens=" + max
                        + ", got " + min + ".");
            }
        }
        int n = SamplingChecks.n(fields);
        SamplingChecks.bestOf(fields, n);
        boolean stream = fields.optBool("stream", false);
        JsonNode streamOptions = body.get("stream_options");
        boolean includeUsage = false;
        boolean continuousUsage = false;
        // vLLM tests stream_options for truth, so an empty object passes without stream and means the defaults.
        if (streamOptions != null && !streamOptions.isNull() && !(streamOptions.isObject() && streamOptions.isEmpty())) {
            if (!streamOptions.isObject()) {
                throw ApiException.badRequest("stream_options", "stream_options: expected an object");
            }
            if (!stream) {
                throw ApiException.badRequest("stream_options", "Stream options can only be defined when `stream=True`.");
            }
            includeUsage = JsonFields.of((ObjectNode) streamOptions).optBool("include_usage", false);
            continuousUsage = JsonFields.of((ObjectNode) streamOptions).optBool("continuous_usage_stats", false);
        }
        Double temperature = fields.optNumber("temperature", 0, 2);
        Double topP = fields.optNumber("top_p", 0, 1);
        if (topP != null && topP == 0) {
            throw ApiException.badRequest("top_p", "top_p must be in (0, 1], got 0.0.");
        }
        SamplingChecks.penalties(fields);
        SamplingChecks.topKMinP(fields);
        SamplingChecks.greedy(temperature, n);
        SamplingChecks.allowedTokenIds(fields);
        ResponseFormats.check(fields, chat);
        DeclaredFields.check(fields, chat);
        OutputSpec output = chat ? OutputSpec.ofChat(body, features) : OutputSpec.PLAIN;
        fields.optString("user");
        boolean logprobs;
        int top;
        if (chat) {
            logprobs = fields.optBool("logprobs", false);
            top = SamplingChecks.topLogprobs(fields, logprobs);
        } else {
            Integer t = fields.optInt("logprobs", 0, Integer.MAX_VALUE);
            logprobs = t != null;
            top = t == null ? 0 : SamplingChecks.sampleLogprobs(t);
        }
        Integer promptLogprobs = SamplingChecks.promptLogprobs(fields, stream);
        if (!chat && promptLogprobs == null && echoPrompt && logprobs) {
            promptLogprobs = top; // vLLM scores an echoed prompt at the depth asked of the output
        }
        if (chat && promptLogprobs == null && chatEcho) {
            promptLogprobs = top; // vLLM's chat echo scores the prompt at top_logprobs' depth, logprobs or not
        }
        SamplingChecks.logitBias(fields, tokenizer);
        List<ReturnedPrompt> returned = null;
        if (chat && promptLogprobs != null && !stream) {
            // Chat scores the templated prompt, its text never returned; a chat stream carries no prompt logprobs.
            returned = List.of(ReturnedPrompt.of(tokenizer, "", prompts.get(0), true));
        } else if (!chat && (echoPrompt || promptLogprobs != null)) {
            returned = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                // A token-id prompt is decoded only here, as vLLM detokenizes it only to return it.
                String text = texts.get(i) != null ? texts.get(i) : tokenizer.decode(prompts.get(i));
                returned.add(ReturnedPrompt.of(tokenizer, text, prompts.get(i), logprobs || promptLogprobs != null));
            }
        }
        Long seed = Seeds.of(fields);
        Integer priority = fields.optInt("priority", Integer.MIN_VALUE, Integer.MAX_VALUE);
        // vLLM refuses a priority it would silently ignore, so a client learns the server is not ordering by it.
        if (priority != null && priority != 0 && !priorityScheduling) {
            throw ApiException.badRequest("priority", "Got priority " + priority + " but Priority scheduling is not enabled.");
        }
        boolean tokenTimes = false;
        JsonNode infersim = body.get("infersim");
        if (infersim != null && infersim.isObject()) {
            tokenTimes = JsonFields.of((ObjectNode) infersim).optBool("token_times", false);
        }
        // vLLM's completions endpoint answers a beam search in one body even when asked to stream (its checks above
        // still saw stream=true); chat streams it like any other request. The mock samples no beams either way.
        boolean beamSearch = fields.optBool("use_beam_search", false);
        // vLLM's kv_transfer_params is any dict, handed to the KV connector (if any) to read
        JsonNode kvTransferParams = body.get(KvTransferParams.FIELD);
        if (kvTransferParams != null && !kvTransferParams.isNull() && !kvTransferParams.isObject()) {
            throw fields.wrongType(KvTransferParams.FIELD, "an object", kvTransferParams);
        }
        boolean streamed = stream && !(beamSearch && !chat);
        return new CompletionRequest(chat, prompts, echo, echoPrompt, echoMessage, returned, promptLogprobs, maxTokens, min,
                fields.optBool("ignore_eos", false), stops(body),
                n, seed, logprobs, top, streamed, includeUsage, continuousUsage,
                priority == null ? 0 : priority, tokenTimes, lora, output,
                kvTransferParams == null || kvTransferParams.isNull() ? null : kvTransferParams);
    }

    /**
     * The templated token ids of a body's messages, with no completion checks: vLLM's /tokenize counts a conversation
     * of any length and ignores sampling fields.
     */
    public int[] chatPrompt(ObjectNode body) {
        return tokenizer.applyChatTemplate(messages(body), templateEnding(body));
    }

    /**
     * How the chat template ends, from {@code add_generation_prompt} (default true) and {@code continue_final_message}
     * (default false), which chat and /tokenize requests share in vLLM. The two cannot both be true: vLLM's request
     * validator refuses a body that sets both; one that sets only continue_final_message leaves the generation prompt
     * at its default, which the template renderer then refuses, so that is a 400 too.
     */
    private static PromptTokenizer.Ending templateEnding(ObjectNode body) {
        JsonFields fields = JsonFields.of(body);
        boolean continueFinal = fields.optBool("continue_final_message", false);
        boolean generationPrompt = fields.optBool("add_generation_prompt", true);
        if (continueFinal && generationPrompt) {
            throw ApiException.badRequest(null, body.hasNonNull("add_generation_prompt")
                    ? "Cannot set both `continue_final_message` and `add_generation_prompt` to True."
                    : "continue_final_message needs add_generation_prompt: false (the template cannot both continue the "
                    + "final message and start a new one)");
        }
        return continueFinal ? PromptTokenizer.Ending.CONTINUE_FINAL
                : generationPrompt ? PromptTokenizer.Ending.GENERATION_PROMPT : PromptTokenizer.Ending.CLOSED;
    }

    /**
     * vLLM's context-length check: the prompt must leave room, and prompt + max_tokens must fit max-model-len. A prompt
     * counted past max-model-len was counted only that far (tokenizing stops there), and the message says "at least".
     */
    void checkContext(int promptTokens, Integer maxTokens, boolean chat) {
        String input = chat ? "messages" : "prompt";
        if (promptTokens > maxModelLen) {
            throw ApiException.badRequest(input, String.format("This model's maximum context length is %d tokens. However, "
                    + "your request has at least %d input tokens. Please reduce the length of the input %s.", maxModelLen,
                    promptTokens, input));
        }
        if (promptTokens >= maxModelLen || (maxTokens != null && promptTokens + (long) maxTokens > maxModelLen)) {
            String message = maxTokens == null
                    ? String.format("This model's maximum context length is %d tokens. However, your request has %d input "
                    + "tokens. Please reduce the length of the input %s.", maxModelLen, promptTokens, input)
                    : String.format("This model's maximum context length is %d tokens. However, you requested %d tokens "
                    + "(%d in the %s, %d in the completion). Please reduce the length of the %s or completion.",
                    maxModelLen, promptTokens + (long) maxTokens, promptTokens, input, maxTokens, input);
            throw ApiException.badRequest(input, message);
        }
        if (promptTokens < 1) {
            throw ApiException.badRequest(input, "The prompt must contain at least one token.");
        }
    }

    private List<PromptTokenizer.Message> messages(ObjectNode body) {
        JsonNode ms = body.get("messages");
        if (ms == null || ms.isNull()) {
            throw ApiException.badRequest("messages", "messages: field required");
        }
        if (!ms.isArray() || ms.isEmpty()) {
            throw ApiException.badRequest("messages", "messages: expected a non-empty array of messages");
        }
        List<PromptTokenizer.Message> out = new ArrayList<>();
        for (int i = 0; i < ms.size(); i++) {
            JsonNode m = ms.get(i);
            String where = "messages[" + i + "]";
            if (!m.isObject()) {
                throw ApiException.badRequest("messages", where + ": expected an object with role and content");
            }
            JsonNode role = m.get("role");
            if (role == null || !role.isTextual()) {
                throw ApiException.badRequest("messages", where + ".role: expected a string");
            }
            out.add(message(role.asText(), m.get("content"), where));
        }
        return out;
    }

    /**
     * A message of its content: a string, or text and image parts in order (each image's placeholder tokens where it
     * stands, sized by the model's vision encoder: {@link ImageParts}); an image part to a text-only model, or an
     * audio part, is a 400.
     */
    private PromptTokenizer.Message message(String role, JsonNode c, String where) {
        if (c == null || c.isNull()) {
            return new PromptTokenizer.Message(role, "");
        }
        if (c.isTextual()) {
            return new PromptTokenizer.Message(role, c.asText());
        }
        if (c.isArray()) {
            StringBuilder text = new StringBuilder();
            List<PromptTokenizer.Media> media = new ArrayList<>();
            for (int i = 0; i < c.size(); i++) {
                JsonNode part = c.get(i);
                String type = part.path("type").asText("");
                JsonNode t = part.get("text");
                if (type.equals("text") && t != null && t.isTextual()) {
                    text.append(t.asText());
                } else if (type.equals("image_url")) {
                    String model = servedModelNames.get(0);
                    media.add(new PromptTokenizer.Media(text.length(),
                            ImageParts.read(part, vision, model, where + ".content[" + i + "]").ids()));
                } else if (type.equals("input_audio") || type.equals("audio_url")) {
                    throw ApiException.badRequest("messages", where + ".content[" + i + "]: the model "
                            + servedModelNames.get(0) + " has no audio encoder, so it takes no audio parts");
                } else {
                    throw ApiException.badRequest("messages", where + ".content: only {\"type\":\"text\",\"text\":...} and "
                            + "{\"type\":\"image_url\",\"image_url\":{\"url\":...}} parts are supported");
                }
            }
            return new PromptTokenizer.Message(role, text.toString(), media);
        }
        throw ApiException.badRequest("messages", where + ".content: expected a string or an array of text parts, got "
                + JsonFields.describe(c));
    }

    /** Each prompt's token ids; {@code texts} gets each prompt's text (token ids decoded) for echo. */
    private List<int[]> prompts(ObjectNode body, List<String> texts) {
        JsonNode p = body.get("prompt");
        if (p == null || p.isNull()) {
            throw ApiException.badRequest("prompt", "prompt: field required");
        }
        List<int[]> out = new ArrayList<>();
        if (p.isTextual()) {
            out.add(tokenizer.encodePrompt(p.asText(), maxModelLen));
            texts.add(p.asText());
        } else if (p.isArray() && !p.isEmpty() && p.get(0).isIntegralNumber()) {
            out.add(tokenIds(p));
            texts.add(null);
        } else if (p.isArray() && !p.isEmpty()) {
            for (JsonNode e : p) {
                if (e.isTextual() != p.get(0).isTextual()) {
                    // The API takes a list of strings or a list of token id lists, as vLLM enforces, not a mix.
                    throw ApiException.badRequest("prompt", "prompt: a list must hold only strings or only token id lists");
                }
                if (e.isTextual()) {
                    out.add(tokenizer.encodePrompt(e.asText(), maxModelLen));
                    texts.add(e.asText());
                } else if (e.isArray()) {
                    out.add(tokenIds(e));
                    texts.add(null);
                } else {
                    throw ApiException.badRequest("prompt", "prompt: list items must be strings or token id lists, got "
                            + JsonFields.describe(e));
                }
            }
        } else {
            throw ApiException.badRequest("prompt", "prompt: expected a string, a list of strings, or a list of token ids");
        }
        return out;
    }

    private int[] tokenIds(JsonNode array) {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode e = array.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt() || e.asInt() < 0) {
                throw ApiException.badRequest("prompt", "prompt: token ids must be non-negative integers, got "
                        + JsonFields.describe(e));
            }
            ids[i] = e.asInt();
            // vLLM refuses ids past its tokenizer's vocabulary; echo mode could not even decode them.
            if (!tokenizer.isKnown(ids[i]) && (vision == null || !vision.isPlaceholder(ids[i]))) {
                throw ApiException.badRequest("prompt", "Token id " + ids[i] + " is out of vocabulary");
            }
        }
        return ids;
    }

    /** The stop strings (empty ones dropped, as vLLM drops them), as one automaton; null when there are none. */
    private static StopStrings stops(ObjectNode body) {
        JsonNode s = body.get("stop");
        if (s == null || s.isNull()) {
            return null;
        }
        List<String> out = new ArrayList<>();
        if (s.isTextual()) {
            out.add(s.asText());
        } else if (s.isArray()) {
            for (JsonNode e : s) {
                if (!e.isTextual()) {
                    throw ApiException.badRequest("stop", "stop: expected a string or a list of strings, got an item "
                            + JsonFields.describe(e));
                }
                out.add(e.asText());
            }
        } else {
            throw ApiException.badRequest("stop", "stop: expected a string or a list of strings, got " + JsonFields.describe(s));
        }
        out.removeIf(String::isEmpty);
        long chars = 0;
        for (String stop : out) {
            chars += stop.length();
        }
        if (chars > StopStrings.MAX_CHARS) {
            throw ApiException.badRequest("stop", "stop: at most " + StopStrings.MAX_CHARS + " characters of stop strings in all, got "
                    + chars);
        }
        return StopStrings.of(out);
    }
}
