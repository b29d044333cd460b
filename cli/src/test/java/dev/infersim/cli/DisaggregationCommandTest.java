package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The prefill/decode flags of {@code serve} and {@code simulate}, and {@code simulate --plan-disaggregation}. */
class DisaggregationCommandTest {

    private static String runFailing(String... args) {
        CliRun run = CliRun.of(args);
        assertEquals(2, run.exitCode(), run.err());
        String text = run.err().trim();
        assertEquals(1, text.lines().count(), text);
        return text;
    }

    @Test
    void badKvTransferFlagsExitWithOneLineNamingTheFlag() {
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"P2pNcclConnector\",\"kv_role\":\"kv_both\"}")
                .contains("--kv-transfer-config kv_connector"));
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"NixlConnector\"}").contains("kv_role"));
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\","
                + "\"engine_id\":\"p0\"}", "--replicas", "2").contains("engine_id"));
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}",
                "--kv-transfer-gbps", "0").contains("--kv-transfer-gbps"));
        assertTrue(runFailing("serve", "--kv-transfer-config", "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}",
                "--timing", "fixed").contains("--timing fixed"));
        assertTrue(runFailing("simulate", "--prefill-replicas", "1").contains("--decode-replicas"));
        assertTrue(runFailing("simulate", "--prefill-replicas", "0", "--decode-replicas", "1").contains("--prefill-replicas"));
        assertTrue(runFailing("simulate", "--prefill-replicas", "1", "--decode-replicas", "1", "--replicas", "2")
                .contains("--replicas"));
        assertTrue(runFailing("simulate", "--plan-disaggregation", "--replicas", "2", "--request-rate", "2")
                .contains("--goodput"));
        assertTrue(runFailing("simulate", "--plan-disaggregation", "--replicas", "1", "--request-rate", "2",
                "--goodput", "ttft:500").contains("--replicas"));
        assertTrue(runFailing("bench", "--model", "m", "--goodput", "ttft:4x").contains("--goodput ttft:4x: a multiple of one request's "
                + "latency alone needs the engine model (simulate)"));
        assertTrue(runFailing("simulate", "--prefill-replicas", "1", "--decode-replicas", "1", "--kv-transfer-latency-ms", "-1")
                .contains("--kv-transfer-latency-ms"));
    }

    @Test
    void aDisaggregatedSimulationReportsItsPools(@TempDir Path dir) throws Exception {
        CliRun run = CliRun.of("simulate", "--num-prompts", "100", "--request-rate", "4", "--random-input-len", "2000",
                "--random-output-len", "50", "--prefill-replicas", "1", "--decode-replicas", "2",
                "--decode-router", "least-outstanding-requests", "--save-result", "--result-dir", dir.toString(),
                "--result-filename", "pd.json");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("Pools: 1 prefill"), run.out());
        JsonNode pd = new ObjectMapper().readTree(dir.resolve("pd.json").toFile()).get("infersim_disaggregation");
        assertEquals(100, pd.get("kv_transfers").asInt());
        assertEquals(2, pd.at("/decode/replicas").asInt());
        assertEquals(50.0, pd.get("kv_transfer_gbps").asDouble());
    }

    @Test
    void thePlanComparesEverySplitWithTheSameReplicasAggregated() {
        CliRun run = CliRun.of("simulate", "--num-prompts", "200", "--request-rate", "4", "--random-input-len", "3000",
                "--random-output-len", "100", "--replicas", "3", "--plan-disaggregation", "--goodput", "ttft:4x", "tpot:1.5x",
                "--dollars-per-gpu-hour", "2.5");
        assertEquals(0, run.exitCode(), run.err());
        String out = run.out();
        assertTrue(out.lines().anyMatch(l -> l.matches("One request alone \\(3000 prompt, 100 output tokens\\): TTFT [0-9.]+ ms, "
                + "TPOT [0-9.]+ ms, E2EL [0-9.]+ ms; so --goodput is TTFT <= [0-9.]+ ms and TPOT <= [0-9.]+ ms")), out);
        for (String row : new String[] {"3 aggregated", "1P:2D", "2P:1D"}) {
            assertTrue(out.contains(row), out);
        }
        assertTrue(out.lines().anyMatch(l -> l.startsWith("Best: ")), out);
    }
}
