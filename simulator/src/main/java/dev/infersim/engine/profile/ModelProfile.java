package dev.infersim.engine.profile;

import com.fasterxml.jackson.annotation.JsonProperty;

import static dev.infersim.common.ConfigException.check;

/**
 * The shape of a decoder-only transformer, in the names of its Hugging Face config.json. Parameter counts are derived,
 * not stored, so a profile cannot disagree with itself.
 *
 * @param numExperts        routed experts per MoE layer; 0 for a dense model
 * @param numExpertsPerTok  experts each token is routed to (top-k); 0 for a dense model
 * @param vision            the vision encoder of a multimodal model (its images become prompt tokens); null for a
 *                          text-only model
 */
public record ModelProfile(
        String name,
        @JsonProperty("hf_id") String hfId,
        @JsonProperty("num_hidden_layers") int layers,
        @JsonProperty("hidden_size") int hiddenSize,
        @JsonProperty("num_attention_heads") int attentionHeads,
        @JsonProperty("num_key_value_heads") int kvHeads,
        @JsonProperty("head_dim") int headDim,
        @JsonProperty("intermediate_size") int intermediateSize,
        @JsonProperty("vocab_size") int vocabSize,
        @JsonProperty("max_position_embeddings") int maxContext,
        @JsonProperty("tie_word_embeddings") boolean tiedEmbeddings,
        @JsonProperty("num_experts") int numExperts,
        @JsonProperty("num_experts_per_tok") int numExpertsPerTok,
        @OptionalField VisionEncoder vision) {

    public ModelProfile {
        check(name != null && !name.isBlank(), "model profile needs a name");
        positive(name, "num_hidden_layers", layers);
        positive(name, "hidden_size", hiddenSize);
        positive(name, "num_attention_heads", attentionHeads);
        positive(name, "num_key_value_heads", kvHeads);
        positive(name, "head_dim", headDim);
        positive(name, "intermediate_size", intermediateSize);
        positive(name, "vocab_size", vocabSize);
        positive(name, "max_position_embeddings", maxContext);
        check(attentionHeads % kvHeads == 0, "model %s: num_attention_heads %d is not a multiple of num_key_value_heads %d",
                name, attentionHeads, kvHeads);
        check(numExperts >= 0 && numExpertsPerTok >= 0 && numExpertsPerTok <= numExperts,
                "model %s: num_experts_per_tok %d must be between 0 and num_experts %d", name, numExpertsPerTok, numExperts);
        check((numExperts == 0) == (numExpertsPerTok == 0),
                "model %s: num_experts and num_experts_per_tok must both be 0 (dense) or both positive", name);
    }

    public boolean isMoe() {
        return numExperts > 0;
    }

    /** Query projection width: heads x head_dim. */
    public long qDim() {
        return (long) attentionHeads * headDim;
    }

    /** Key (or value) projection width: kv heads x head_dim. */
    public long kvDim() {
        return (long) kvHeads * headDim;
    }

    /** Attention weights per layer: fused QKV plus the output projection. */
    public long attentionParamsPerLayer() {
        return hiddenSize * (qDim() + 2 * kvDim()) + qDim() * hiddenSize;
    }

    /** Gated MLP weights (gate, up, down) of one expert, or of the dense MLP. */
    public long mlpParamsPerExpert() {
        return 3L * hiddenSize * intermediateSize;
    }

    /** MLP weights per layer: all experts for MoE. */
    public long mlpParamsPerLayer() {
        return mlpParamsPerExpert() * Math.max(1, numExperts) + (isMoe() ? (long) hiddenSize * numExperts : 0);
    }

    /**
     * LoRA weights per layer of an adapter of rank {@code rank} that targets every linear layer: {@code rank x (d_in +
     * d_out)} for each of q, k, v, o and the MLP's gate, up and down (attention only on a mixture-of-experts model,
     * whose experts take no adapter here).
     */
    public long loraParamsPerLayer(int rank) {
        return (long) rank * (loraInputsPerLayer() + loraOutputsPerLayer());
    }

    /** Sum of d_in over the projections a LoRA adapter targets in one layer. */
    public long loraInputsPerLayer() {
        long attention = 3L * hiddenSize + qDim();
        return isMoe() ? attention : attention + 2L * hiddenSize + intermediateSize;
    }

    /** Sum of d_out over the projections a LoRA adapter targets in one layer. */
    public long loraOutputsPerLayer() {
        long attention = qDim() + 2 * kvDim() + hiddenSize;
        return isMoe() ? attention : attention + 2L * intermediateSize + hiddenSize;
    }

    public long embeddingParams() {
        return (long) vocabSize * hiddenSize;
    }

    /** All parameters, counting a tied LM head once. Norm weights are negligible and left out. */
    public long totalParams() {
        long perLayer = attentionParamsPerLayer() + mlpParamsPerLayer();
        return layers * perLayer + embeddingParams() * (tiedEmbeddings ? 1 : 2);
    }

    /** Parameters one token touches: attention, its top-k experts, embedding and LM head. */
    public long activeParams() {
        long mlp = isMoe() ? mlpParamsPerExpert() * numExpertsPerTok : mlpParamsPerExpert();
        return layers * (attentionParamsPerLayer() + mlp) + embeddingParams() * (tiedEmbeddings ? 1 : 2);
    }

    private static void positive(String model, String field, int v) {
        check(v > 0, "model %s: %s must be > 0, got %d", model, field, v);
    }
}
