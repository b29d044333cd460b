package dev.infersim.bench.measure;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class MetricsScraperTest {

    @Test
    void sumsGaugesOverLabelSetsAndIgnoresOthers() {
        String page = """
                # HELP vllm:num_requests_running Number of requests in model execution batches.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="m"} 3.0
                vllm:num_requests_running{engine="1",model_name="m"} 4.0
                vllm:num_requests_waiting{model_name="m"} 2.0
                vllm:kv_cache_usage_perc{model_name="m"} 0.5 1700000000000
                vllm:num_requests_running_total 99
                """;
        Map<String, Double> v = MetricsScraper.parse(page);
        assertEquals(7.0, v.get(MetricsScraper.RUNNING));
        assertEquals(2.0, v.get(MetricsScraper.WAITING));
        assertEquals(0.5, v.get(MetricsScraper.KV_USAGE));
        assertFalse(v.containsKey("vllm:num_requests_running_total"));
    }
}
