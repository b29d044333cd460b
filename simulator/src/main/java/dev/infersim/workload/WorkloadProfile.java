package dev.infersim.workload;

import dev.infersim.workload.length.LengthDistribution;
import dev.infersim.workload.arrival.RateSchedule;
import dev.infersim.workload.arrival.RampUp;
import dev.infersim.workload.arrival.RampStrategy;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * A workload profile file ({@code configs/workloads/*.yaml}): a weighted mix of request classes, and optionally the
 * load to run it at and the number of prompts. Command-line options win over the file's {@code load} and
 * {@code num_prompts}. The format is documented in configs/workloads/README.md.
 *
 * @param name        profile name
 * @param description what the profile models and where its numbers come from
 * @param numPrompts  default {@code --num-prompts}, or null
 * @param load        default load, or null
 * @param classes     the request classes, at least one
 */
public record WorkloadProfile(@JsonProperty("name") String name, @JsonProperty("description") String description,
                              @JsonProperty("num_prompts") Long numPrompts,
                              @JsonProperty("load") Load load,
                              @JsonProperty("classes") List<ProfileClass> classes) {

    public WorkloadProfile {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("workload profile needs a 'name'");
        }
        if (classes == null || classes.isEmpty()) {
            throw new IllegalArgumentException("workload profile '" + name + "' needs at least one entry in 'classes'");
        }
        if (numPrompts != null && numPrompts < 1) {
            throw new IllegalArgumentException("num_prompts must be >= 1, got " + numPrompts);
        }
        classes = List.copyOf(classes);
    }

    /** The classes as engine-ready values. */
    public List<RequestClass> requestClasses() {
        return classes.stream().map(ProfileClass::requestClass).toList();
    }

    /**
     * The load section, with vLLM's flag names. Rates and burstiness accept a number or {@code inf}.
     *
     * @param requestRate     {@code --request-rate}, requests per second, or inf
     * @param burstiness      {@code --burstiness}, or inf
     * @param maxConcurrency  {@code --max-concurrency}
     * @param rampUpStrategy  {@code --ramp-up-strategy}: linear or exponential
     * @param rampUpStartRps  {@code --ramp-up-start-rps}
     * @param rampUpEndRps    {@code --ramp-up-end-rps}
     * @param rampUpDurationS ramp length in seconds; absent = over the request count, as vLLM
     * @param diurnal         a daily swing around {@code request_rate}, or absent
     * @param bursts          step bursts, or absent
     */
    public record Load(@JsonProperty("request_rate") String requestRate,
                       @JsonProperty("burstiness") String burstiness,
                       @JsonProperty("max_concurrency") Integer maxConcurrency,
                       @JsonProperty("ramp_up_strategy") String rampUpStrategy,
                       @JsonProperty("ramp_up_start_rps") Double rampUpStartRps,
                       @JsonProperty("ramp_up_end_rps") Double rampUpEndRps,
                       @JsonProperty("ramp_up_duration_s") Double rampUpDurationS,
                       @JsonProperty("diurnal") RateSchedule.Diurnal diurnal,
                       @JsonProperty("bursts") List<RateSchedule.Burst> bursts) {

        public Load {
            if (requestRate != null) {
                WorkloadSpec.parseRate("request_rate", requestRate);
            }
            if (burstiness != null) {
                WorkloadSpec.parseRate("burstiness", burstiness);
            }
            if (maxConcurrency != null && maxConcurrency < 0) {
                throw new IllegalArgumentException("max_concurrency must be >= 0, got " + maxConcurrency);
            }
            if (rampUpStrategy != null) {
                if (rampUpStartRps == null || rampUpEndRps == null) {
                    throw new IllegalArgumentException(
                            "ramp_up_strategy needs both ramp_up_start_rps and ramp_up_end_rps");
                }
                rampUp(rampUpStrategy, rampUpStartRps, rampUpEndRps, rampUpDurationS);
                if (requestRate != null && Double.isFinite(WorkloadSpec.parseRate("request_rate", requestRate))) {
                    throw new IllegalArgumentException("a ramp sets the rate itself: drop request_rate (or set it to inf)");
                }
            } else if (rampUpStartRps != null || rampUpEndRps != null || rampUpDurationS != null) {
                throw new IllegalArgumentException("ramp_up_start_rps, ramp_up_end_rps and ramp_up_duration_s need "
                        + "ramp_up_strategy");
            }
            if (schedule(diurnal, bursts) != null && (requestRate == null || rampUpStrategy != null
                    || Double.isInfinite(WorkloadSpec.parseRate("request_rate", requestRate)))) {
                throw new IllegalArgumentException("diurnal and bursts vary a finite request_rate; give one (and no ramp)");
            }
        }

        /** The diurnal swing and bursts this section describes, or null. */
        RateSchedule schedule() {
            return schedule(diurnal, bursts);
        }

        // Static so the compact constructor can validate before the fields are assigned.
        private static RateSchedule schedule(RateSchedule.Diurnal diurnal, List<RateSchedule.Burst> bursts) {
            return diurnal == null && (bursts == null || bursts.isEmpty()) ? null : new RateSchedule(diurnal, bursts);
        }

        /** The ramp this section describes, or null. */
        RampUp rampUp() {
            return rampUpStrategy == null ? null
                    : rampUp(rampUpStrategy, rampUpStartRps, rampUpEndRps, rampUpDurationS);
        }

        private static RampUp rampUp(String strategyName, double startRps, double endRps, Double durationS) {
            RampStrategy strategy = RampStrategy.parse(strategyName);
            return durationS == null
                    ? RampUp.overRequests(strategy, startRps, endRps)
                    : RampUp.overDuration(strategy, startRps, endRps, Math.round(durationS * 1e9));
        }
    }

    /**
     * One request class as written in YAML.
     *
     * @param name         class name
     * @param weight       relative frequency; default 1
     * @param inputTokens  request-specific prompt tokens (after the shared prefix)
     * @param maxTokens    the request's max_tokens; without {@code eos_position} also the generated length
     * @param eosPosition  where the model emits EOS (generation stops there if before max_tokens), or absent
     * @param prefixTokens shared prefix length in front of the prompt; default 0
     * @param prefixGroups how many distinct shared prefixes the class uses; default 1
     * @param loraAdapters the LoRA adapters the class's requests run on, with weights; absent for the base model
     */
    public record ProfileClass(@JsonProperty("name") String name, @JsonProperty("weight") Double weight,
                               @JsonProperty("input_tokens") LengthDistribution inputTokens,
                               @JsonProperty("max_tokens") LengthDistribution maxTokens,
                               @JsonProperty("eos_position") LengthDistribution eosPosition,
                               @JsonProperty("prefix_tokens") Integer prefixTokens,
                               @JsonProperty("prefix_groups") Integer prefixGroups,
                               @JsonProperty("lora_adapters") List<LoraMix.Share> loraAdapters) {

        public ProfileClass {
            if (inputTokens == null) {
                throw new IllegalArgumentException("class '" + name + "' needs 'input_tokens'");
            }
            if (maxTokens == null) {
                throw new IllegalArgumentException("class '" + name + "' needs 'max_tokens'");
            }
            toRequestClass(name, weight, inputTokens, maxTokens, eosPosition, prefixTokens, prefixGroups, loraAdapters);
        }

        RequestClass requestClass() {
            return toRequestClass(name, weight, inputTokens, maxTokens, eosPosition, prefixTokens, prefixGroups, loraAdapters);
        }

        // Static so the compact constructor can validate before the fields are assigned.
        private static RequestClass toRequestClass(String name, Double weight, LengthDistribution inputTokens,
                                                   LengthDistribution maxTokens, LengthDistribution eosPosition,
                                                   Integer prefixTokens, Integer prefixGroups,
                                                   List<LoraMix.Share> loraAdapters) {
            int prefix = prefixTokens == null ? 0 : prefixTokens;
            int groups = prefixGroups == null ? (prefix > 0 ? 1 : 0) : prefixGroups;
            LoraMix loras;
            try {
                loras = loraAdapters == null ? null : new LoraMix(loraAdapters);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("class '" + name + "': " + e.getMessage(), e);
            }
            return new RequestClass(name, weight == null ? 1.0 : weight, inputTokens, maxTokens, eosPosition,
                    prefix, groups, loras);
        }
    }
}
