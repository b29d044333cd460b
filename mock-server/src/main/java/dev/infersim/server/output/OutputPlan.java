package dev.infersim.server.output;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.common.SplitMix64;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;

import java.io.IOException;

/**
 * The layout of one choice's output tokens when the reply is more than plain text, and how each token reaches the
 * client. A reasoning model ({@code --reasoning-parser}) first thinks: {@code <think>}, the reasoning tokens (a
 * {@code --reasoning-fraction} share of the output), {@code </think>}; then comes the body: lorem text, the JSON value
 * of a {@code response_format} ({@link JsonSchemaSampler}), or a tool call. Every token is generated and timed by the
 * engine like any other; the markers and the tool call's wrapper are tokens the client never sees as text, as vLLM's
 * parsers strip them.
 *
 * <p>A tool call is written the way vLLM's model output carries it (vLLM main at
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c): for a named function the arguments alone (guided by the function's
 * schema); for {@code required} the JSON list {@code [{"name": ..., "parameters": ...}]} its guided decoding produces;
 * for {@code auto} Hermes' {@code <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>} (the layout the mock uses
 * for every tool parser). Streamed, the arguments arrive as tool-call deltas, the first carrying the call's id, type
 * and name ({@code tool_parsers/streaming.py}, {@code hermes_tool_parser.py}). The finish is {@code tool_calls} for
 * {@code auto} and {@code required} and the engine's for a named function, as vLLM answers.
 */
public final class OutputPlan {
    public enum Channel { SILENT, REASONING, CONTENT, ARGUMENTS }

    enum Body { TEXT, JSON, TOOL_CALL }

    /** Characters drawn past the last token a reply can reach, for the word the cut falls in. */
    private static final int REACH_MARGIN_CHARS = 8192;
    static final String THINK = "<think>";
    static final String END_THINK = "</think>";

    private final OutputSpec.ToolChoice mode;
    /** Reasoning tokens between the markers; 0 when the reply does not think (and has no markers). */
    public final int reasoningTokens;
    final Body body;
    /** First token of the body. */
    final int bodyStart;
    /** Token range of a tool call's arguments (and, for JSON, of the value). */
    final int argsStart;
    final int argsEnd;
    /** End (exclusive) of a JSON or tool-call body, where the model emits EOS; {@link EngineRequest#NO_EOS} for text. */
    final int bodyEnd;
    public final String toolName;
    public final String toolCallId;
    public final boolean includeReasoning;
    public final TokenText text;

    private OutputPlan(OutputSpec.ToolChoice mode, int reasoningTokens, Body body, int bodyStart, int argsStart, int argsEnd,
                       int bodyEnd, String toolName, String toolCallId, boolean includeReasoning, TokenText text) {
        this.mode = mode;
        this.reasoningTokens = reasoningTokens;
        this.body = body;
        this.bodyStart = bodyStart;
        this.argsStart = argsStart;
        this.argsEnd = argsEnd;
        this.bodyEnd = bodyEnd;
        this.toolName = toolName;
        this.toolCallId = toolCallId;
        this.includeReasoning = includeReasoning;
        this.text = text;
    }

    /**
     * The plan of a choice, or null when its reply is plain text without reasoning. {@code base} is the lorem (or echo)
     * text, {@code seed} the choice's text seed, {@code length} the tokens the choice would generate as plain text
     * (the smaller of its max_tokens and its EOS position), {@code maxTokens} the most tokens it may generate;
     * {@code budget} counts what the request's choices draw.
     */
    public static OutputPlan draw(OutputSpec spec, ModelFeatures features, TokenText base, long seed, long length, int maxTokens,
                           PromptTokenizer tokenizer, LoremVocabulary words, SamplingBudget budget) {
        // A value longer than max_tokens can carry is drawn only as far as the reply reaches: past maxTokens + 2 of the
        // longest tokens, and a margin for the word the cut falls in, the first maxTokens tokens are the same. Not with
        // a reasoning parser, whose thinking takes a share of the whole value's length.
        long reach = features.reasoningParser() != null ? Long.MAX_VALUE
                : (maxTokens + 2L) * tokenizer.longestTokenChars() + REACH_MARGIN_CHARS;
        boolean reasons = features.reasoningParser() != null;
        if (!reasons && !spec.shaped()) {
            return null;
        }
        SplitMix64 rng = new SplitMix64(seed ^ 0x7001CA11L);
        OutputSpec.Tool tool = pickTool(spec, features, rng);
        String[] prefix = new String[0];
        String[] value = new String[0];
        String[] suffix = new String[0];
        Body body = Body.TEXT;
        if (tool != null) {
            body = Body.TOOL_CALL;
            String where = "tools[" + shown(tool.name()) + "].function.parameters";
            // the name goes out with every call (its first delta, the message), and in the wrapper's tokens
            counted(budget, tool.name().length(), where);
            String args = sample(tool.parameters(), rng.nextLong(), words, where, budget, reach);
            switch (spec.toolChoice()) {
                case REQUIRED -> {
                    prefix = pieces(tokenizer, counted(budget, "[{\"name\": \"" + tool.name() + "\", \"parameters\": ", where));
                    suffix = pieces(tokenizer, "}]");
                }
                case AUTO -> {
                    prefix = pieces(tokenizer, counted(budget, "<tool_call>\n{\"name\": \"" + tool.name() + "\", \"arguments\": ", where));
                    suffix = pieces(tokenizer, "}\n</tool_call>");
                }
                default -> { }
            }
            value = pieces(tokenizer, args);
        } else if (spec.schema() != null || spec.jsonObject()) {
            body = Body.JSON;
            String json = spec.schema() != null ? sample(spec.schema(), rng.nextLong(), words, "response_format", budget, reach)
                    : counted(budget, JsonSchemaSampler.sampleObject(rng.nextLong(), words), "response_format");
            value = pieces(tokenizer, json);
        }
        int bodyTokens = prefix.length + value.length + suffix.length;
        int reasoning = 0;
        if (reasons) {
            double f = features.reasoningFraction();
            // text: a share f of what the choice generates; a JSON or tool body: a share f of the body plus its thinking
            reasoning = body == Body.TEXT ? (int) Math.floor(f * length) - 2 : (int) Math.floor(f * (bodyTokens + 2) / (1 - f));
            reasoning = Math.max(0, reasoning);
        }
        int bodyStart = reasoning > 0 ? reasoning + 2 : 0;
        if (!reasons || reasoning == 0) {
            if (body == Body.TEXT) {
                return null;
            }
        }
        int argsStart = bodyStart + prefix.length;
        int argsEnd = argsStart + value.length;
        int bodyEnd = body == Body.TEXT ? EngineRequest.NO_EOS : argsEnd + suffix.length;
        int[] starts;
        String[][] runs;
        String[] wrapped = concat(prefix, value, suffix);
        if (reasoning > 0) {
            starts = body == Body.TEXT ? new int[] {0, reasoning + 1} : new int[] {0, reasoning + 1, bodyStart};
            runs = body == Body.TEXT ? new String[][] {{THINK}, {END_THINK}} : new String[][] {{THINK}, {END_THINK}, wrapped};
        } else {
            starts = new int[] {0};
            runs = new String[][] {wrapped};
        }
        String id = tool == null ? null : String.format("chatcmpl-tool-%016x%016x", rng.nextLong(), rng.nextLong());
        return new OutputPlan(spec.toolChoice(), reasoning, body, bodyStart, argsStart, argsEnd, bodyEnd,
                tool == null ? null : tool.name(), id, spec.includeReasoning(), base.splice(starts, runs));
    }

    /** The tool this choice calls, or null: always for required and a named function, with a probability for auto. */
    private static OutputSpec.Tool pickTool(OutputSpec spec, ModelFeatures features, SplitMix64 rng) {
        return switch (spec.toolChoice()) {
            case NONE -> null;
            case NAMED -> spec.tool(spec.namedTool());
            case REQUIRED -> spec.tools().get((int) Math.floorMod(rng.nextLong(), (long) spec.tools().size()));
            case AUTO -> rng.nextDouble() < features.toolCallProbability()
                    ? spec.tools().get((int) Math.floorMod(rng.nextLong(), (long) spec.tools().size())) : null;
        };
    }

    private static String sample(com.fasterxml.jackson.databind.JsonNode schema, long seed, LoremVocabulary words, String where,
                                 SamplingBudget budget, long reach) {
        try {
            return JsonSchemaSampler.sample(schema, seed, words, budget, reach);
        } catch (IllegalArgumentException | ClassCastException | ArithmeticException e) {
            // a schema that is not one (a properties list, bounds past 64 bits) is the request's fault, never a 500
            throw refused(where, e.getMessage());
        }
    }

    /** {@code text}, its characters counted against the request's budget. */
    private static String counted(SamplingBudget budget, String text, String where) {
        counted(budget, text.length(), where);
        return text;
    }

    private static void counted(SamplingBudget budget, long chars, String where) {
        try {
            budget.chars(chars);
        } catch (IllegalArgumentException e) {
            throw refused(where, e.getMessage());
        }
    }

    private static ApiException refused(String where, String why) {
        return ApiException.badRequest(where.startsWith("tools") ? "tools" : "response_format", where + ": " + why);
    }

    /** A tool name as a message quotes it: its first 64 characters. */
    private static String shown(String name) {
        return name.length() <= 64 ? name : name.substring(0, 64) + "...";
    }

    private static String[] pieces(PromptTokenizer tokenizer, String text) {
        return TokenText.pieces(tokenizer, tokenizer.encode(text));
    }

    private static String[] concat(String[]... parts) {
        int n = 0;
        for (String[] p : parts) {
            n += p.length;
        }
        String[] out = new String[n];
        int k = 0;
        for (String[] p : parts) {
            System.arraycopy(p, 0, out, k, p.length);
            k += p.length;
        }
        return out;
    }

    /** Where token {@code i} goes. */
    public Channel channel(int i) {
        if (reasoningTokens > 0 && i < bodyStart) {
            return i == 0 || i == reasoningTokens + 1 ? Channel.SILENT : Channel.REASONING;
        }
        if (body == Body.TOOL_CALL) {
            return i >= argsStart && i < argsEnd ? Channel.ARGUMENTS : Channel.SILENT;
        }
        return Channel.CONTENT;
    }

    /** The model's EOS position: the end of a JSON or tool body, else the plain text's. */
    public int eos(int plainEos) {
        return body == Body.TEXT ? plainEos : bodyEnd;
    }

    /** Whether the tool call was generated whole (its wrapper closed), among {@code emitted} tokens. */
    boolean callComplete(int emitted) {
        return body == Body.TOOL_CALL && emitted >= bodyEnd;
    }

    /**
     * The finish_reason the client sees: {@code tool_calls} where vLLM reports it (auto and required; a stream as soon
     * as arguments were streamed, a whole body when the call was complete), else the engine's.
     */
    public String finishName(String engineFinish, FinishReason engine, int emitted, boolean stream) {
        if (body != Body.TOOL_CALL || mode == OutputSpec.ToolChoice.NAMED || engine == null) {
            return engineFinish;
        }
        boolean called = stream ? emitted > argsStart : callComplete(emitted)
                && (mode == OutputSpec.ToolChoice.AUTO || engine == FinishReason.STOP);
        return called ? "tool_calls" : engineFinish;
    }

    /** The text of the tokens of {@code channel} among the first {@code n}, cut at {@code keepChars} characters. */
    public String text(Channel channel, int n, int keepChars) {
        return collect(n, keepChars, i -> channel(i) == channel);
    }

    /** The text of the first {@code n} tokens that {@code take} accepts, the whole output cut at {@code keepChars}. */
    private String collect(int n, int keepChars, java.util.function.IntPredicate take) {
        StringBuilder b = new StringBuilder();
        int chars = 0;
        for (int i = 0; i < n && chars < keepChars; i++) {
            String piece = text.piece(i);
            if (chars + piece.length() > keepChars) {
                piece = piece.substring(0, keepChars - chars);
            }
            chars += piece.length();
            if (take.test(i)) {
                b.append(piece);
            }
        }
        return b.toString();
    }

    /** Whether any of the first {@code n} tokens is on {@code channel}. */
    boolean reached(Channel channel, int n) {
        return switch (channel) {
            case REASONING -> reasoningTokens > 0 && n > 1;
            case CONTENT -> body != Body.TOOL_CALL && n > bodyStart;
            case ARGUMENTS -> body == Body.TOOL_CALL && n > argsStart;
            case SILENT -> n > 0;
        };
    }

    /**
     * The whole chat message's fields after the role: {@code content}, {@code tool_calls} and {@code reasoning}, as
     * vLLM's non-stream chat handler fills them for each tool_choice.
     */
    public void writeMessage(JsonGenerator g, int n, int keepChars) throws IOException {
        g.writeStringField("content", content(n, keepChars));
        g.writeNullField("refusal");
        g.writeNullField("annotations");
        g.writeNullField("audio");
        g.writeNullField("function_call");
        g.writeArrayFieldStart("tool_calls");
        if (listsCall(n)) {
            g.writeStartObject();
            g.writeStringField("id", toolCallId);
            g.writeStringField("type", "function");
            g.writeObjectFieldStart("function");
            g.writeStringField("name", toolName);
            g.writeStringField("arguments", text(Channel.ARGUMENTS, n, keepChars));
            g.writeEndObject();
            g.writeEndObject();
        }
        g.writeEndArray();
        writeReasoning(g, n, keepChars);
    }

    /** The message's content after {@code n} tokens, as vLLM's non-stream chat handler sets it; null for none. */
    public String content(int n, int keepChars) {
        if (body == Body.TOOL_CALL) {
            // Hermes: a complete call leaves no content; an unfinished one is no call, its raw text the content.
            // required and named calls clear the content.
            return mode == OutputSpec.ToolChoice.AUTO ? callComplete(n) ? null : rawBody(n, keepChars) : "";
        }
        String content = reached(Channel.CONTENT, n) || reasoningTokens == 0 ? text(Channel.CONTENT, n, keepChars) : null;
        // vLLM: "If generation stops right after end-of-think, return null content"
        return reasoningTokens > 0 && content != null && content.isEmpty() ? null : content;
    }

    /** Whether the message lists the tool call after {@code n} tokens (a named call always; others when complete). */
    public boolean listsCall(int n) {
        return body == Body.TOOL_CALL && (mode == OutputSpec.ToolChoice.NAMED || callComplete(n));
    }

    /** The reasoning returned after {@code n} tokens, or null. */
    public String reasoning(int n, int keepChars) {
        return reasoningTokens > 0 && includeReasoning && reached(Channel.REASONING, n) ? text(Channel.REASONING, n, keepChars) : null;
    }

    void writeReasoning(JsonGenerator g, int n, int keepChars) throws IOException {
        g.writeStringField("reasoning", reasoning(n, keepChars));
    }

    /** A body's text as generated, wrapper included (what vLLM returns as content when no call could be parsed). */
    private String rawBody(int n, int keepChars) {
        return collect(Math.min(n, bodyEnd), keepChars, i -> i >= bodyStart);
    }

    /**
     * The {@code delta} fields of token {@code i}'s stream chunk ({@code piece} its text), as vLLM's stream writes
     * them with {@code exclude_unset}: reasoning, content, or a tool-call delta; nothing for a token the client does
     * not see.
     */
    public void writeDelta(JsonGenerator g, int i, String piece) throws IOException {
        switch (channel(i)) {
            case REASONING -> {
                if (includeReasoning) {
                    g.writeStringField("reasoning", piece);
                }
            }
            case CONTENT -> g.writeStringField("content", piece);
            case ARGUMENTS -> toolDelta(g, i == argsStart && mode != OutputSpec.ToolChoice.AUTO, false, piece);
            case SILENT -> {
                if (body == Body.TOOL_CALL && mode == OutputSpec.ToolChoice.AUTO && i == argsStart - 1) {
                    toolDelta(g, true, true, null); // Hermes names the call once its name is parsed, arguments follow
                }
            }
        }
    }

    /** Whether token {@code i} makes a chunk of its own (not the last token, which always carries the finish). */
    public boolean visible(int i) {
        Channel ch = channel(i);
        if (ch == Channel.SILENT) {
            return body == Body.TOOL_CALL && mode == OutputSpec.ToolChoice.AUTO && i == argsStart - 1;
        }
        return ch != Channel.REASONING || includeReasoning;
    }

    private void toolDelta(JsonGenerator g, boolean head, boolean nameOnly, String arguments) throws IOException {
        g.writeArrayFieldStart("tool_calls");
        g.writeStartObject();
        if (head) {
            g.writeStringField("id", toolCallId);
            g.writeStringField("type", "function");
        }
        g.writeNumberField("index", 0);
        g.writeObjectFieldStart("function");
        if (head) {
            g.writeStringField("name", toolName);
        } else if (mode == OutputSpec.ToolChoice.REQUIRED) {
            g.writeNullField("name"); // vLLM's required-call deltas set the name to None explicitly
        }
        if (!nameOnly) {
            g.writeStringField("arguments", arguments);
        }
        g.writeEndObject();
        g.writeEndObject();
        g.writeEndArray();
    }
}
