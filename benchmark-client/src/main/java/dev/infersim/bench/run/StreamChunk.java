package dev.infersim.bench.run;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;

/**
 * What one streamed chunk (the data of one SSE event) says, read with Jackson's streaming parser: the generated text
 * of every choice ({@code text} of completions; {@code content}, {@code reasoning_content} or {@code reasoning}, and
 * {@code tool_calls} arguments of chat deltas), how many choices carried any, the finish reason, the usage
 * ({@code prompt_tokens}, {@code completion_tokens}, {@code prompt_tokens_details.cached_tokens}), an error (OpenAI's
 * {@code {"error": {...}}} or vLLM's {@code {"object": "error", "message": ...}}), and an infersim server's ground
 * truth. Unknown keys are skipped. Reused for every chunk of a stream, with one non-blocking parser fed each chunk in
 * turn: a parser built per chunk allocated about 800 bytes an event, most of the client's garbage. Parsing allocates
 * only for the rare error, finish reason and ground truth.
 */
final class StreamChunk {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonFactory JSON = MAPPER.getFactory();

    private JsonParser parser;
    private ByteArrayFeeder feeder;
    /** Bytes fed to {@link #parser} before the current chunk. */
    private long fed;

    private final StringBuilder text = new StringBuilder();
    private int choicesWithContent;
    private boolean hasChoices;
    private String finishReason;
    private long promptTokens;
    private long completionTokens;
    private long cachedPromptTokens;
    private String errorMessage;
    private JsonNode infersim;

    /** The chunk's generated text, all choices in order. */
    CharSequence text() {
        return text;
    }

    /** Choices in this chunk that carried generated text or a tool call. */
    int choicesWithContent() {
        return choicesWithContent;
    }

    /** Whether the chunk had a non-empty {@code choices} array. */
    boolean hasChoices() {
        return hasChoices;
    }

    String finishReason() {
        return finishReason;
    }

    /** The usage's counts; -1 where not sent. */
    long promptTokens() {
        return promptTokens;
    }

    long completionTokens() {
        return completionTokens;
    }

    long cachedPromptTokens() {
        return cachedPromptTokens;
    }

    /** Non-null when the chunk is an error. */
    String errorMessage() {
        return errorMessage;
    }

    /** The server's {@code infersim} block (its ground truth), or null. */
    JsonNode infersim() {
        return infersim;
    }

    /** Reads one chunk; returns false (the cause in {@link #errorMessage}) when it is not a JSON object. */
    boolean parse(byte[] data, int length) {
        text.setLength(0);
        choicesWithContent = 0;
        hasChoices = false;
        finishReason = null;
        promptTokens = -1;
        completionTokens = -1;
        cachedPromptTokens = -1;
        errorMessage = null;
        infersim = null;
        try {
            if (parser == null) {
                parser = JSON.createNonBlockingByteArrayParser();
                feeder = (ByteArrayFeeder) parser.getNonBlockingInputFeeder();
                fed = 0;
            }
            feeder.feedInput(data, 0, length);
            JsonParser p = parser;
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return malformed("not a JSON object: " + preview(data, length));
            }
            readTop(p, data, length);
            // a chunk the parser ran out of mid-object ends its loops early: only a closed root object is whole
            if (p.currentToken() != JsonToken.END_OBJECT || !p.getParsingContext().inRoot()) {
                return malformed("malformed JSON (the chunk ends inside it): " + preview(data, length));
            }
            int end = (int) (p.currentLocation().getByteOffset() - fed);
            for (int i = end; i < length; i++) {
                if (!isWhitespace(data[i])) {
                    return malformed("malformed JSON (text after the object): " + preview(data, length));
                }
            }
            p.nextToken(); // consumes the trailing whitespace, which the next chunk's feed requires
            fed += length;
            return true;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return malformed("malformed JSON (" + e.getOriginalMessage() + "): " + preview(data, length));
        } catch (IOException e) {
            return malformed("unreadable chunk (" + e.getMessage() + "): " + preview(data, length));
        }
    }

    /** The chunk is not one JSON object: the parser's state is unknown, so the next chunk gets a new one. */
    private boolean malformed(String message) {
        errorMessage = message;
        parser = null;
        return false;
    }

    private static boolean isWhitespace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private void readTop(JsonParser p, byte[] data, int length) throws IOException {
        boolean errorObject = false;
        String message = null;
        String error = null;
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken value = p.nextToken();
            switch (key) {
                case "choices" -> readChoices(p, value);
                case "usage" -> readUsage(p, value);
                case "error" -> error = readError(p, value);
                case "object" -> errorObject = value == JsonToken.VALUE_STRING && "error".equals(p.getText());
                case "message" -> message = value == JsonToken.VALUE_STRING ? p.getText() : skip(p);
                case "infersim" -> infersim = value == JsonToken.START_OBJECT ? readWhole(p, data, length) : null;
                default -> p.skipChildren();
            }
        }
        if (error != null) {
            errorMessage = error;
        } else if (errorObject) {
            errorMessage = message != null ? message : "error object without a message";
        }
    }

    /**
     * The {@code infersim} object, read as a tree from the chunk's own bytes once the non-blocking parser has seen it
     * close. That parser cannot build a tree: given an object the chunk cuts off, a tree reader asked it for tokens it
     * did not have without end and ran the heap out (found by {@code SseClientFuzzTest}); {@code skipChildren} instead
     * refuses an object that does not close within the chunk, and the chunk, whole, is then read again by an ordinary
     * parser (once per request: only its last chunk carries the object).
     */
    private JsonNode readWhole(JsonParser p, byte[] data, int length) throws IOException {
        p.skipChildren();
        return MAPPER.readTree(data, 0, length).get("infersim");
    }

    /** {@code "error": {"message": ...}} or {@code "error": "..."}; null for {@code "error": null}. */
    private static String readError(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (!opens(p, value, JsonToken.START_OBJECT)) {
            return null;
        }
        String message = null;
        String type = null;
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken v = p.nextToken();
            if (v == JsonToken.VALUE_STRING && key.equals("message")) {
                message = p.getText();
            } else if (v == JsonToken.VALUE_STRING && key.equals("type")) {
                type = p.getText();
            } else {
                p.skipChildren();
            }
        }
        return message != null ? message : type != null ? type : "error";
    }

    private void readChoices(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_ARRAY)) {
            return;
        }
        while (p.nextToken() == JsonToken.START_OBJECT) {
            hasChoices = true;
            int before = text.length();
            boolean toolCall = false;
            for (String key; (key = p.nextFieldName()) != null; ) {
                JsonToken v = p.nextToken();
                switch (key) {
                    case "text" -> appendText(p, v);
                    case "delta", "message" -> toolCall |= readDelta(p, v);
                    case "finish_reason" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            finishReason = p.getText();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            if (text.length() > before || toolCall) {
                choicesWithContent++;
            }
        }
    }

    /** A chat delta; returns whether it carried a tool call. */
    private boolean readDelta(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_OBJECT)) {
            return false;
        }
        boolean toolCall = false;
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken v = p.nextToken();
            switch (key) {
                case "content", "reasoning_content", "reasoning" -> appendText(p, v);
                case "tool_calls" -> toolCall |= readToolCalls(p, v);
                default -> p.skipChildren();
            }
        }
        return toolCall;
    }

    /** Tool-call deltas: their function arguments are generated text; a call's first delta may carry only its name. */
    private boolean readToolCalls(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_ARRAY)) {
            return false;
        }
        boolean any = false;
        while (p.nextToken() == JsonToken.START_OBJECT) {
            any = true;
            for (String key; (key = p.nextFieldName()) != null; ) {
                JsonToken v = p.nextToken();
                switch (key) {
                    case "function" -> readArguments(p, v);
                    default -> p.skipChildren();
                }
            }
        }
        return any;
    }

    /** A tool call's function: its arguments (not its name) are generated text. */
    private void readArguments(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_OBJECT)) {
            return;
        }
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken v = p.nextToken();
            if (key.equals("arguments")) {
                appendText(p, v);
            } else {
                p.skipChildren();
            }
        }
    }

    private void readUsage(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_OBJECT)) {
            return;
        }
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken v = p.nextToken();
            switch (key) {
                case "prompt_tokens" -> promptTokens = v == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : -1;
                case "completion_tokens" -> completionTokens = v == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : -1;
                case "prompt_tokens_details" -> readPromptDetails(p, v);
                default -> p.skipChildren();
            }
        }
    }

    private void readPromptDetails(JsonParser p, JsonToken value) throws IOException {
        if (!opens(p, value, JsonToken.START_OBJECT)) {
            return;
        }
        for (String key; (key = p.nextFieldName()) != null; ) {
            JsonToken v = p.nextToken();
            if (key.equals("cached_tokens") && v == JsonToken.VALUE_NUMBER_INT) {
                cachedPromptTokens = p.getLongValue();
            } else {
                p.skipChildren();
            }
        }
    }

    /**
     * Whether {@code value} starts the object or array ({@code start}) a reader expects, the parser then inside it;
     * any other value is skipped whole.
     */
    private static boolean opens(JsonParser p, JsonToken value, JsonToken start) throws IOException {
        if (value == start) {
            return true;
        }
        p.skipChildren();
        return false;
    }

    /** Appends a string value without making a String of it. */
    private void appendText(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_STRING) {
            text.append(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
        } else {
            p.skipChildren();
        }
    }

    private static String skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    private static String preview(byte[] data, int length) {
        String s = new String(data, 0, Math.min(length, 200), java.nio.charset.StandardCharsets.UTF_8);
        return length > 200 ? s + "..." : s;
    }
}
