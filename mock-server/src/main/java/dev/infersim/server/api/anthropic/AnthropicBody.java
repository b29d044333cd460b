package dev.infersim.server.api.anthropic;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.OutputPlan;
import io.netty.buffer.ByteBuf;

import java.io.IOException;

/**
 * The Messages response vLLM makes of a whole chat response ({@code messages_full_converter}, dumped with
 * {@code exclude_none}): the chat id, a thinking block (signed) when the reply reasoned, a text block when it has
 * content, a {@code tool_use} block per tool call (its input the parsed arguments), the stop reason and usage; plus the
 * {@code infersim} ground truth.
 */
final class AnthropicBody implements Wire.Body {
    private final ResponseContext response;

    AnthropicBody(ResponseContext response) {
        this.response = response;
    }

    @Override
    public void write(ByteBuf out) {
        String id = response.id();
        Choice c = response.choices()[0];
        int n = c.request.outputTokens();
        OutputPlan plan = c.plan;
        Json.write(out, g -> {
            g.writeStartObject();
            g.writeStringField("id", id);
            g.writeStringField("type", "message");
            g.writeStringField("role", "assistant");
            g.writeArrayFieldStart("content");
            String reasoning = plan == null ? null : plan.reasoning(n, c.stopTextLength());
            if (reasoning != null && !reasoning.isEmpty()) {
                g.writeStartObject();
                g.writeStringField("type", "thinking");
                g.writeStringField("thinking", reasoning);
                g.writeStringField("signature", response.derivedId(n));
                g.writeEndObject();
            }
            String content = plan == null ? c.finalText() : plan.content(n, c.stopTextLength());
            if (content != null && !content.isEmpty()) {
                g.writeStartObject();
                g.writeStringField("type", "text");
                g.writeStringField("text", content);
                g.writeEndObject();
            }
            if (plan != null && plan.listsCall(n)) {
                toolUse(g, plan, n, c.stopTextLength());
            }
            g.writeEndArray();
            g.writeStringField("model", response.model());
            String stop = AnthropicMessages.stopReason(c.finishName(), c.stopReason());
            if (stop != null) {
                g.writeStringField("stop_reason", stop);
            }
            AnthropicMessages.writeStopSequence(g, c.stopReason());
            g.writeObjectFieldStart("usage");
            g.writeNumberField("input_tokens", c.request.promptTokens());
            g.writeNumberField("output_tokens", n);
            g.writeEndObject();
            response.truth().writeField(g);
            g.writeEndObject();
        });
    }

    private static void toolUse(JsonGenerator g, OutputPlan plan, int n, int keep) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "tool_use");
        g.writeStringField("id", plan.toolCallId);
        g.writeStringField("name", plan.toolName);
        g.writeFieldName("input");
        String arguments = plan.text(OutputPlan.Channel.ARGUMENTS, n, keep);
        try {
            g.writeTree(Json.MAPPER.readTree(arguments));
        } catch (IOException cutShort) {
            // a named call cut by max_tokens: vLLM's json.loads fails there; the block keeps an empty input instead
            g.writeStartObject();
            g.writeEndObject();
        }
        g.writeEndObject();
    }
}
