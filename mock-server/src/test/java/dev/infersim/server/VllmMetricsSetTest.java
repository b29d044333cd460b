package dev.infersim.server;

import dev.infersim.engine.LoraConfig;
import dev.infersim.server.config.MetricsOptions;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.FakeMetrics;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * /metrics serves exactly vLLM's {@code vllm:} series at {@code vllm-project/vllm@9aaf83ef5}: every sample name
 * (a counter's {@code _total} and {@code _created}, a histogram's {@code _bucket}, {@code _count}, {@code _sum} and
 * {@code _created}) with its label names, and the values of the enumerated labels, against
 * {@code vllm-9aaf83ef5-metrics.txt}, written from vLLM's source; any sample more or less fails. LoRA adds
 * {@code vllm:lora_requests_info}; {@code legacy} adds the two series older pickers read; {@code --fake-metrics}
 * changes values, not names.
 */
class VllmMetricsSetTest {
    private static final Pattern SAMPLE = Pattern.compile("^(vllm:[a-z0-9_:]+)(?:\\{(.*)})? \\S+$");
    private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** The samples vLLM exposes, as "name{label,label=value,...}" with label names sorted (le and values kept). */
    private static Set<String> expected(boolean lora, boolean legacy) throws IOException {
        Set<String> out = new TreeSet<>();
        List<String> lines = new ArrayList<>();
        try (InputStream in = VllmMetricsSetTest.class.getResourceAsStream("vllm-9aaf83ef5-metrics.txt")) {
            new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                    .forEach(lines::add);
        }
        if (legacy) {
            lines.add("gauge vllm:gpu_cache_usage_perc");
            lines.add("histogram vllm:time_per_output_token_seconds");
        }
        for (String line : lines) {
            String[] f = line.split(" ");
            String type = f[0];
            String name = f[1];
            if (type.equals("info")) {
                out.add(name + "{" + String.join(",", new TreeSet<>(List.of(f).subList(2, f.length))) + "}");
                continue;
            }
            List<List<String>> variants = new ArrayList<>();
            variants.add(new ArrayList<>(List.of("engine", "model_name")));
            for (int i = 2; i < f.length; i++) {
                String[] kv = f[i].split("=");
                List<List<String>> next = new ArrayList<>();
                for (List<String> v : variants) {
                    for (String value : kv[1].split("\\|")) {
                        List<String> w = new ArrayList<>(v);
                        w.add(kv[0] + "=" + value);
                        next.add(w);
                    }
                }
                variants = next;
            }
            for (List<String> v : variants) {
                switch (type) {
                    case "gauge" -> out.add(sample(name, v));
                    case "counter" -> {
                        out.add(sample(name + "_total", v));
                        out.add(sample(name + "_created", v));
                    }
                    default -> {
                        List<String> withLe = new ArrayList<>(v);
                        withLe.add("le");
                        out.add(sample(name + "_bucket", withLe));
                        out.add(sample(name + "_count", v));
                        out.add(sample(name + "_sum", v));
                        out.add(sample(name + "_created", v));
                    }
                }
            }
        }
        if (lora) {
            out.add("vllm:lora_requests_info{max_lora,running_lora_adapters,waiting_lora_adapters}");
        }
        return out;
    }

    private static String sample(String name, List<String> labels) {
        return name + "{" + String.join(",", new TreeSet<>(labels)) + "}";
    }

    /** The vllm: samples served, in the same form: label names, with the values of the enumerated labels kept. */
    private static Set<String> served(String page) {
        Set<String> enumerated = Set.of("reason", "sleep_state", "source", "finished_reason");
        Set<String> out = new TreeSet<>();
        for (String line : page.lines().toList()) {
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) {
                assertTrue(!line.startsWith("vllm:"), "unparsable sample: " + line);
                continue;
            }
            List<String> labels = new ArrayList<>();
            Matcher l = LABEL.matcher(m.group(2) == null ? "" : m.group(2));
            while (l.find()) {
                labels.add(enumerated.contains(l.group(1)) ? l.group(1) + "=" + l.group(2) : l.group(1));
            }
            out.add(sample(m.group(1), labels));
        }
        return out;
    }

    private static Set<String> scrape(ServerOptions options) throws Exception {
        MockServer server = TestServers.start(options);
        try {
            assertEquals(200, TestServers.post(server, "/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 3}").status());
            return served(TestServers.get(server, "/metrics").raw().body());
        } finally {
            TestServers.close(server);
        }
    }

    @Test
    void everyVllmSeriesAndLabelSetIsServedAndNoOther() throws Exception {
        assertEquals(expected(false, false), scrape(TestServers.options(TestServers.llama8b(4), 50).build()));
    }

    @Test
    void loraAddsTheLoraGaugeAndLegacyAddsTheSeriesOlderPickersRead() throws Exception {
        assertEquals(expected(true, true), scrape(TestServers.options(TestServers.llama8b(4).toBuilder()
                .lora(LoraConfig.of(1, 16, 0)).build(), 50).metrics(new MetricsOptions(false, true, null)).build()));
    }

    @Test
    void fakeMetricsReportFixedValuesUnderTheSameNames() throws Exception {
        FakeMetrics fake = FakeMetrics.parse("{\"running-requests\": 10, \"waiting-requests\": 30, \"kv-cache-usage\": 0.4,"
                + " \"loras\": [{\"running\": \"lora4,lora2\", \"waiting\": \"lora3\", \"timestamp\": 1257894567}],"
                + " \"ttft-buckets-values\": [1, 2, 3], \"request-success-total\": {\"stop\": 20}}");
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(4).toBuilder()
                .lora(LoraConfig.of(1, 16, 0)).build(), 50).metrics(new MetricsOptions(false, false, fake)).build());
        try {
            TestServers.post(server, "/v1/completions", "{\"prompt\": \"hi\", \"max_tokens\": 3}");
            String page = TestServers.get(server, "/metrics").raw().body();
            assertEquals(expected(true, false), served(page));
            String labels = "{engine=\"0\",model_name=\"llama-3.1-8b\"";
            assertTrue(page.contains("vllm:num_requests_running" + labels + "} 10.0"), page);
            assertTrue(page.contains("vllm:num_requests_waiting" + labels + "} 30.0"));
            assertTrue(page.contains("vllm:kv_cache_usage_perc" + labels + "} 0.4"));
            assertTrue(page.contains("vllm:time_to_first_token_seconds_bucket" + labels + ",le=\"0.005\"} 3.0"), "cumulative");
            assertTrue(page.contains("vllm:time_to_first_token_seconds_count" + labels + "} 6.0"));
            assertTrue(page.contains("vllm:request_success_total" + labels + ",finished_reason=\"stop\"} 20.0"));
            assertTrue(page.contains("vllm:lora_requests_info{max_lora=\"1\",waiting_lora_adapters=\"lora3\","
                    + "running_lora_adapters=\"lora4,lora2\"} 1.257894567e+09"), page);
            assertTrue(page.contains("vllm:generation_tokens_total" + labels + "} 0.0"), "the real request is not counted");
        } finally {
            TestServers.close(server);
        }
    }
}
