package dev.infersim.engine;

/** Deployments and engines small enough to reason about in tests. */
final class EngineFixtures {
    private EngineFixtures() {
    }

    static Deployment.Builder h100Llama8b() {
        return Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b"));
    }

    /** An engine with exactly {@code blocks} KV blocks of {@code blockSize} tokens and the roofline cost of the deployment. */
    static EngineCore engine(Deployment d, int blocks, String policy) {
        int maxModelLen = d.maxModelLen() > 0 ? d.maxModelLen() : Math.min(d.model().maxContext(), blocks * d.blockSize());
        KvCapacity kv = new KvCapacity(0, 0, 0, blocks, d.blockSize(), maxModelLen);
        return new EngineCore(d, kv, new RooflineCostModel(d), SchedulingPolicies.byName(policy));
    }

    static EngineRequest request(long id, int prompt, int output) {
        return new EngineRequest(id, prompt, null, output, 0, EngineRequest.NO_EOS, 0, 0);
    }

    static EngineRequest request(long id, int[] promptIds, int output) {
        return new EngineRequest(id, promptIds.length, promptIds, output, 0, EngineRequest.NO_EOS, 0, 0);
    }

    /** Plans and completes steps until the engine is idle, returning the virtual time at the end. */
    static long drain(EngineCore engine, long now) {
        for (StepPlan p = engine.planStep(now); p != null; p = engine.planStep(now)) {
            now = p.endNanos();
            engine.completeStep(p);
        }
        return now;
    }
}
