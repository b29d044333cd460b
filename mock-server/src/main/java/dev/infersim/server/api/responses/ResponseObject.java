package dev.infersim.server.api.responses;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.engine.FinishReason;
import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.json.Json;
import dev.infersim.server.output.OutputPlan;

import java.io.IOException;

/**
 * The Responses API's response object as vLLM writes it without Harmony (vLLM main at
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c): {@code ResponsesResponse.from_request}, every field dumped, with its output
 * items (a {@code reasoning} item, a {@code message} with one {@code output_text}, {@code function_call} items),
 * {@code status} {@code incomplete} when max_output_tokens cut it, and usage with {@code reasoning_tokens} counted
 * between the think markers as vLLM's {@code count_reasoning_tokens} does; plus the {@code infersim} ground truth. One
 * choice, in progress or finished.
 *
 * @param req          the Responses request body, whose fields the object echoes
 * @param echoedBytes  about the bytes those echoed fields take ({@link ResponsesApi#echoedBytes})
 * @param response     the chat response it is made of
 */
record ResponseObject(ObjectNode req, long echoedBytes, ResponseContext response) {

    /** The request's one choice (the Responses API has no n). */
    Choice c() {
        return response.choices()[0];
    }

    void write(JsonGenerator g, boolean finished, boolean withTruth) throws IOException {
        Choice c = c();
        int n = finished ? c.request.outputTokens() : 0;
        boolean incomplete = finished && c.request.finishReason() == FinishReason.LENGTH;
        g.writeStartObject();
        g.writeStringField("id", response.id());
        g.writeNumberField("created_at", response.created());
        if (incomplete) {
            g.writeObjectFieldStart("incomplete_details");
            g.writeStringField("reason", "max_output_tokens");
            g.writeEndObject();
        } else {
            g.writeNullField("incomplete_details");
        }
        echo(g, "instructions");
        echo(g, "metadata");
        g.writeStringField("model", response.model());
        g.writeStringField("object", "response");
        g.writeArrayFieldStart("output");
        if (finished) {
            outputItems(g, n);
        }
        g.writeEndArray();
        g.writeBooleanField("parallel_tool_calls", req.path("parallel_tool_calls").asBoolean(true));
        g.writeNumberField("temperature", req.path("temperature").asDouble(1.0));
        g.writeFieldName("tool_choice");
        g.writeTree(req.hasNonNull("tool_choice") ? req.get("tool_choice")
                : Json.MAPPER.getNodeFactory().textNode(req.path("tools").isEmpty() ? "none" : "auto"));
        g.writeFieldName("tools");
        g.writeTree(req.has("tools") && req.get("tools").isArray() ? req.get("tools") : Json.MAPPER.createArrayNode());
        g.writeNumberField("top_p", req.path("top_p").asDouble(1.0));
        g.writeBooleanField("background", false);
        g.writeNumberField("max_output_tokens", c.request.maxTokens());
        echo(g, "max_tool_calls");
        g.writeNullField("previous_response_id");
        g.writeNullField("prompt");
        echo(g, "reasoning");
        g.writeStringField("service_tier", req.path("service_tier").asText("auto"));
        g.writeStringField("status", !finished ? "in_progress" : incomplete ? "incomplete" : "completed");
        echo(g, "text");
        g.writeNullField("top_logprobs");
        g.writeStringField("truncation", req.path("truncation").asText("disabled"));
        if (finished) {
            usage(g, n);
        } else {
            g.writeNullField("usage");
        }
        echo(g, "user");
        g.writeNumberField("presence_penalty", req.path("presence_penalty").asDouble(0.0));
        g.writeNumberField("frequency_penalty", req.path("frequency_penalty").asDouble(0.0));
        g.writeNullField("kv_transfer_params");
        g.writeNullField("input_messages");
        g.writeNullField("output_messages");
        if (withTruth) {
            response.truth().writeField(g);
        }
        g.writeEndObject();
    }

    private void echo(JsonGenerator g, String key) throws IOException {
        g.writeFieldName(key);
        JsonNode v = req.get(key);
        if (v == null) {
            g.writeNull();
        } else {
            g.writeTree(v);
        }
    }

    /** vLLM's parser path: a reasoning item, a message when there is content, the tool call; else one message. */
    private void outputItems(JsonGenerator g, int n) throws IOException {
        Choice c = c();
        String id = response.id();
        OutputPlan plan = c.plan;
        int keep = c.stopTextLength();
        if (plan == null) {
            message(g, "msg_" + id, c.finalText(), "completed");
            return;
        }
        String reasoning = plan.reasoning(n, keep);
        if (reasoning != null && !reasoning.isEmpty()) {
            reasoningItem(g, "rs_" + id, reasoning, null); // only the last item has a status (vLLM's note)
        }
        String content = plan.content(n, keep);
        if (content != null && !content.isEmpty()) {
            message(g, "msg_" + id, content, "completed");
        }
        if (plan.listsCall(n)) {
            functionCall(g, "fc_" + id, plan.toolCallId, plan.toolName, plan.text(OutputPlan.Channel.ARGUMENTS, n, keep),
                    "completed");
        }
    }

    private void usage(JsonGenerator g, int n) throws IOException {
        Choice c = c();
        int input = c.request.promptTokens();
        g.writeObjectFieldStart("usage");
        g.writeNumberField("input_tokens", input);
        g.writeObjectFieldStart("input_tokens_details");
        g.writeNumberField("cached_tokens", Math.max(0, c.request.cachedPromptTokens()));
        g.writeArrayFieldStart("input_tokens_per_turn");
        g.writeEndArray();
        g.writeArrayFieldStart("cached_tokens_per_turn");
        g.writeEndArray();
        g.writeEndObject();
        g.writeNumberField("output_tokens", n);
        g.writeObjectFieldStart("output_tokens_details");
        // tokens strictly between <think> and </think>, markers not counted (count_reasoning_tokens)
        int reasoning = c.plan == null || c.plan.reasoningTokens == 0 ? 0 : Math.max(0, Math.min(n - 1, c.plan.reasoningTokens));
        g.writeNumberField("reasoning_tokens", reasoning);
        g.writeNumberField("tool_output_tokens", 0);
        g.writeArrayFieldStart("output_tokens_per_turn");
        g.writeEndArray();
        g.writeArrayFieldStart("tool_output_tokens_per_turn");
        g.writeEndArray();
        g.writeEndObject();
        g.writeNumberField("total_tokens", input + n);
        g.writeEndObject();
    }

    static void reasoningItem(JsonGenerator g, String itemId, String text, String status) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", itemId);
        g.writeArrayFieldStart("summary");
        g.writeEndArray();
        g.writeStringField("type", "reasoning");
        g.writeArrayFieldStart("content");
        g.writeStartObject();
        g.writeStringField("text", text);
        g.writeStringField("type", "reasoning_text");
        g.writeEndObject();
        g.writeEndArray();
        g.writeNullField("encrypted_content");
        g.writeStringField("status", status);
        g.writeEndObject();
    }

    static void message(JsonGenerator g, String itemId, String text, String status) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", itemId);
        g.writeArrayFieldStart("content");
        if (text != null && !text.isEmpty()) {
            outputText(g, text);
        }
        g.writeEndArray();
        g.writeStringField("role", "assistant");
        g.writeStringField("status", status);
        g.writeStringField("type", "message");
        g.writeEndObject();
    }

    static void outputText(JsonGenerator g, String text) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart("annotations");
        g.writeEndArray();
        g.writeStringField("text", text);
        g.writeStringField("type", "output_text");
        g.writeNullField("logprobs");
        g.writeEndObject();
    }

    static void functionCall(JsonGenerator g, String itemId, String callId, String name, String arguments, String status)
            throws IOException {
        g.writeStartObject();
        g.writeStringField("arguments", arguments);
        g.writeStringField("call_id", callId);
        g.writeStringField("name", name);
        g.writeStringField("type", "function_call");
        g.writeStringField("id", itemId);
        g.writeStringField("status", status);
        g.writeEndObject();
    }
}
