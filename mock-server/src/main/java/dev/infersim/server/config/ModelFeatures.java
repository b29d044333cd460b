package dev.infersim.server.config;

import java.util.List;

/**
 * What the served model does beyond plain text, as {@code vllm serve} flags turn it on (vLLM main at commit
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c, 2026-05-19):
 *
 * @param toolCallParser       {@code --tool-call-parser NAME}: one of vLLM's registered tool parsers
 *                             ({@code vllm/tool_parsers/__init__.py}); without one, vLLM refuses {@code tool_choice}
 *                             {@code required} or a named function, and {@code auto} also needs
 * @param enableAutoToolChoice {@code --enable-auto-tool-choice} (which itself needs a tool parser)
 * @param toolCallProbability  infersim's: the share of {@code tool_choice: auto} replies that call a tool (drawn per
 *                             choice from its seed); {@code required} and a named function always call one
 * @param reasoningParser      {@code --reasoning-parser NAME}: one of vLLM's registered reasoning parsers
 *                             ({@code vllm/reasoning/__init__.py}); replies then think first, between
 *                             {@code <think>} and {@code </think>}
 * @param reasoningFraction    infersim's: the share of a reply's output tokens spent thinking
 * @param runner               {@code --runner generate|pooling}: a pooling model serves {@code /v1/embeddings} (its
 *                             vectors as wide as the model's hidden size) instead of chat and completions
 * @param enableSleepMode      {@code --enable-sleep-mode}: {@code POST /sleep}, {@code POST /wake_up} and
 *                             {@code GET /is_sleeping}, which vLLM serves only with {@code VLLM_SERVER_DEV_MODE=1}
 * @param devMode              {@code VLLM_SERVER_DEV_MODE=1} in the server's environment
 * @param loadBandwidthGbps    {@code --load-bandwidth-gbps}: storage read rate of weights a level-2 sleep discarded
 */
public record ModelFeatures(String toolCallParser, boolean enableAutoToolChoice, double toolCallProbability,
                            String reasoningParser, double reasoningFraction, String runner, boolean enableSleepMode,
                            boolean devMode, double loadBandwidthGbps) {

    /** vLLM's tool parser names at the cited commit. */
    public static final List<String> TOOL_CALL_PARSERS = List.of("deepseek_v3", "deepseek_v31", "deepseek_v32",
            "deepseek_v4", "cohere_command3", "cohere_command4", "ernie45", "glm45", "glm47", "granite-20b-fc", "granite",
            "granite4", "hermes", "poolside_v1", "hunyuan_a13b", "hy_v3", "internlm", "jamba", "lfm2", "kimi_k2",
            "llama3_json", "llama4_json", "llama4_pythonic", "longcat", "mimo", "minimax_m2", "minimax", "mistral", "olmo3",
            "openai", "phi4_mini_json", "pythonic", "qwen3_coder", "qwen3_xml", "seed_oss", "step3", "step3p5", "xlam",
            "gigachat3", "functiongemma", "gemma4", "apertus");
    /** vLLM's reasoning parser names at the cited commit. */
    public static final List<String> REASONING_PARSERS = List.of("deepseek_r1", "deepseek_v3", "deepseek_v4",
            "poolside_v1", "cohere_command3", "cohere_command4", "ernie45", "gemma4", "glm45", "openai_gptoss", "granite",
            "holo2", "hunyuan_a13b", "hy_v3", "kimi_k2", "mimo", "minimax_m2", "minimax_m2_append_think", "mistral",
            "nemotron_v3", "olmo3", "qwen3", "seed_oss", "step3", "step3p5");
    public static final double DEFAULT_TOOL_CALL_PROBABILITY = 0.5;
    public static final double DEFAULT_REASONING_FRACTION = 0.5;

    /** A plain text model: no tool parser, no reasoning, no sleep mode. */
    public static final ModelFeatures NONE = new ModelFeatures(null, false, DEFAULT_TOOL_CALL_PROBABILITY, null,
            DEFAULT_REASONING_FRACTION, "generate", false, false, dev.infersim.engine.StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS);

    public ModelFeatures {
        check(toolCallParser == null || TOOL_CALL_PARSERS.contains(toolCallParser), "--tool-call-parser: unknown parser '"
                + toolCallParser + "'; vLLM's: " + String.join(", ", TOOL_CALL_PARSERS));
        check(!enableAutoToolChoice || toolCallParser != null, "--enable-auto-tool-choice requires --tool-call-parser");
        check(toolCallProbability >= 0 && toolCallProbability <= 1, "--tool-call-probability must be within [0, 1], got "
                + toolCallProbability);
        check(reasoningParser == null || REASONING_PARSERS.contains(reasoningParser), "--reasoning-parser: unknown parser '"
                + reasoningParser + "'; vLLM's: " + String.join(", ", REASONING_PARSERS));
        check(reasoningFraction >= 0 && reasoningFraction < 1, "--reasoning-fraction must be within [0, 1), got "
                + reasoningFraction);
        check("generate".equals(runner) || "pooling".equals(runner), "--runner must be generate or pooling, got " + runner);
        check(loadBandwidthGbps > 0 && Double.isFinite(loadBandwidthGbps), "--load-bandwidth-gbps must be a positive number, got "
                + loadBandwidthGbps);
    }

    public boolean pooling() {
        return runner.equals("pooling");
    }

    /** Whether the sleep routes are served: sleep mode on and vLLM's development mode set. */
    public boolean sleepRoutes() {
        return enableSleepMode && devMode;
    }

    public ModelFeatures withTools(String parser, boolean autoToolChoice, double probability) {
        return new ModelFeatures(parser, autoToolChoice, probability, reasoningParser, reasoningFraction, runner,
                enableSleepMode, devMode, loadBandwidthGbps);
    }

    public ModelFeatures withReasoning(String parser, double fraction) {
        return new ModelFeatures(toolCallParser, enableAutoToolChoice, toolCallProbability, parser, fraction, runner,
                enableSleepMode, devMode, loadBandwidthGbps);
    }

    public ModelFeatures withRunner(String r) {
        return new ModelFeatures(toolCallParser, enableAutoToolChoice, toolCallProbability, reasoningParser,
                reasoningFraction, r, enableSleepMode, devMode, loadBandwidthGbps);
    }

    public ModelFeatures withSleepMode(boolean enabled, boolean dev, double storageGbps) {
        return new ModelFeatures(toolCallParser, enableAutoToolChoice, toolCallProbability, reasoningParser,
                reasoningFraction, runner, enabled, dev, storageGbps);
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
