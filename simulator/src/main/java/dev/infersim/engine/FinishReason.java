package dev.infersim.engine;

/** Why a request stopped generating, in OpenAI's {@code finish_reason} words. */
public enum FinishReason {
    /** The model emitted EOS (or a stop string matched). */
    STOP,
    /** max_tokens or max-model-len reached. */
    LENGTH,
    /** The client went away or the request was cancelled. */
    ABORT;

    public String openAiName() {
        return this == LENGTH ? "length" : this == STOP ? "stop" : "abort";
    }
}
