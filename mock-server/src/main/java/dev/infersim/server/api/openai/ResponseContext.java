package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.model.ResponseTruth;
import dev.infersim.server.request.CompletionRequest;

import java.io.IOException;

/**
 * One response as every wire format's encoders write it: the parsed request, the identity its body and chunks open
 * with ({@code id} as the wire names it, {@code created} in Unix seconds, {@code model}), the request's choices, their
 * logprobs and the ground truth. Made once per exchange ({@link #open}) and handed whole to the format's encoders.
 *
 * @param model the served model name, or the LoRA adapter the request ran on (vLLM names the adapter as the model)
 */
public record ResponseContext(CompletionRequest request, String id, long created, String model, Choice[] choices, Logprobs logprobs,
                       ResponseTruth truth) {

    /** The context of a response to {@code request} (whose choices are {@code choices}) in {@code wire}'s format. */
    static ResponseContext open(ModelService service, Wire wire, CompletionRequest request, String requestId, Choice[] choices) {
        String id = wire.id(request, requestId);
        long created = System.currentTimeMillis() / 1000;
        String model = request.lora() != null ? request.lora().name() : service.options.servedModelName();
        return new ResponseContext(request, id, created, model, choices, new Logprobs(request, service.vocabulary),
                new ResponseTruth(service, request, requestId, choices));
    }

    /** The keys every OpenAI body and chunk opens with, {@code object} being its kind. */
    public void writeIdentity(JsonGenerator g, String object) throws IOException {
        g.writeStringField("id", id);
        g.writeStringField("object", object);
        g.writeNumberField("created", created);
        g.writeStringField("model", model);
    }

    /**
     * An id of 32 hex digits made of this response's id and {@code n}, the same for the same response: a Responses
     * output item's id, a Messages thinking block's signature.
     */
    public String derivedId(long n) {
        return String.format("%016x%016x", id.hashCode() * 0x9E3779B97F4A7C15L, n);
    }
}
