package dev.infersim.cli;

import dev.infersim.prediction.ChainPredictionKeys;
import dev.infersim.prediction.ClosedLoopPredictionKeys;
import dev.infersim.prediction.FixedPredictionKeys;
import dev.infersim.result.PredictionResult;
import dev.infersim.result.ResultJson;
import dev.infersim.result.ServingResult;
import dev.infersim.result.VllmDetailArrays;
import dev.infersim.sim.SimulatorKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Every command's result file is read back by the types that wrote it: reading a file and writing what was read gives
 * the same bytes, for results written now and for results committed under {@code results/} (written before the
 * results were typed, by infersim at 459726b), whose keys, order and number formatting the types must keep.
 */
class ResultRoundTripTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({"simulate-fleet.json", "simulate-disaggregated.json", "simulate-ramp.json"})
    void aCommittedSimulateResultIsReadAndWrittenAgainByteForByte(String name) throws Exception {
        Path file = committed(name);
        assertEquals(Files.readString(file), ResultJson.text(ServingResult.read(file, SimulatorKeys.class)));
    }

    @Test
    void aCommittedDetailedResultIsWrittenAgainWithItsArraysFromItsPerRequestFile() throws Exception {
        Path file = committed("simulate-detailed.json");
        ServingResult<SimulatorKeys> read = ServingResult.read(file, SimulatorKeys.class);
        Path rows = file.resolveSibling(Path.of(read.producer().detailedFile()).getFileName());
        assertEquals(Files.readString(file), ResultJson.text(read.withDetails(VllmDetailArrays.of(rows))));
    }

    @ParameterizedTest
    @CsvSource({"predict-fleet.json, chain", "predict-near-saturation.json, chain", "predict-saturated.json, chain",
            "predict-fixed.json, fixed", "predict-fixed-saturated.json, fixed", "predict-closed-loop.json, closed"})
    void aCommittedPredictionIsReadAndWrittenAgainByteForByte(String name, String model) throws Exception {
        Path file = committed(name);
        assertEquals(Files.readString(file), ResultJson.text(PredictionResult.read(file, predictionKeys(model))));
    }

    @Test
    void simulateResultsWrittenNowRoundTrip() throws IOException {
        Path file = dir.resolve("s.json");
        run("simulate", "--dataset-name", "random", "--seed", "3", "--num-prompts", "60", "--random-input-len", "128",
                "--random-output-len", "16", "--request-rate", "10", "--replicas", "2", "--goodput", "ttft:50",
                "--save-result", "--save-detailed", "--result-dir", dir.toString(), "--result-filename", "s.json");
        ServingResult<SimulatorKeys> read = ServingResult.read(file, SimulatorKeys.class);
        assertNotNull(read.totals().requestGoodput());
        assertEquals(Files.readString(file), ResultJson.text(read.withDetails(
                VllmDetailArrays.of(Path.of(read.producer().detailedFile())))));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "chain | --request-rate 20 --slo-ttft-ms 200 --dollars-per-gpu-hour 2",
            "chain | --request-rate 90",
            "fixed | --request-rate 40 --timing fixed --time-to-first-token 20 --inter-token-latency 5 --max-num-seqs 32",
            "closed | --request-rate inf --max-concurrency 16"})
    void predictResultsWrittenNowRoundTrip(String model, String flags) throws IOException {
        Path file = dir.resolve("p.json");
        String[] common = {"predict", "--dataset-name", "random", "--seed", "3", "--num-prompts", "500",
                "--random-input-len", "512", "--random-output-len", "64", "--save-result", "--result-dir", dir.toString(),
                "--result-filename", "p.json"};
        run(concat(common, flags.split(" ")));
        assertEquals(Files.readString(file), ResultJson.text(PredictionResult.read(file, predictionKeys(model))));
    }

    private static Class<?> predictionKeys(String model) {
        return switch (model) {
            case "chain" -> ChainPredictionKeys.class;
            case "fixed" -> FixedPredictionKeys.class;
            default -> ClosedLoopPredictionKeys.class;
        };
    }

    private static void run(String... args) {
        CliRun r = CliRun.of(args);
        assertEquals(0, r.exitCode(), r.err());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static Path committed(String name) throws URISyntaxException {
        return Path.of(ResultRoundTripTest.class.getResource("/results/" + name).toURI());
    }
}
