package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.request.CompletionRequest;

import java.io.IOException;

/** The {@code usage} object: prompt, total and completion tokens, of one choice so far or of the whole request. */
final class Usage {
    private Usage() {
    }

    /** Continuous usage stats: choice {@code c}'s prompt and the tokens streamed to it so far. */
    static void writeChoice(JsonGenerator g, Choice c) throws IOException {
        write(g, c.request.promptTokens(), c.written);
    }

    /** Every prompt of the request and every choice's completion tokens. */
    static void writeRequest(JsonGenerator g, CompletionRequest request, Choice[] choices) throws IOException {
        long prompt = 0;
        for (int[] p : request.prompts()) {
            prompt += p.length;
        }
        long completion = 0;
        for (Choice c : choices) {
            completion += c.request.outputTokens();
        }
        write(g, prompt, completion);
    }

    private static void write(JsonGenerator g, long prompt, long completion) throws IOException {
        g.writeObjectFieldStart("usage");
        g.writeNumberField("prompt_tokens", prompt);
        g.writeNumberField("total_tokens", prompt + completion);
        g.writeNumberField("completion_tokens", completion);
        g.writeEndObject();
    }
}
