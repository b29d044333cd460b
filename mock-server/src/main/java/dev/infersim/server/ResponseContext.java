package dev.infersim.server;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;

/** What both response encoders write from: the request, the response's identity, its choices, logprobs and truth. */
abstract class ResponseEncoder {
    final CompletionRequest request;
    final String id;
    final long created;
    final String model;
    final Choice[] choices;
    final Logprobs logprobs;
    final GroundTruth truth;

    ResponseEncoder(CompletionRequest request, String id, long created, String model, Choice[] choices, Logprobs logprobs,
                    GroundTruth truth) {
        this.request = request;
        this.id = id;
        this.created = created;
        this.model = model;
        this.choices = choices;
        this.logprobs = logprobs;
        this.truth = truth;
    }

    /** The keys every body and chunk opens with, {@code object} being its kind. */
    void writeIdentity(JsonGenerator g, String object) throws IOException {
        g.writeStringField("id", id);
        g.writeStringField("object", object);
        g.writeNumberField("created", created);
        g.writeStringField("model", model);
    }
}
