package dev.infersim.cli;

import picocli.CommandLine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The exit codes of every command, in one place: the commands return them and each command's {@code --help} lists
 * them from here, so the two cannot drift apart.
 */
final class ExitCodes {
    static final int OK = 0;
    static final int BUG = 1;
    static final int BAD_INPUT = 2;
    static final int INVALID_RUN = 3;
    /** check-harness: the harness's numbers differ from the truth (3, as an invalid run is for bench). */
    static final int HARNESS_FINDINGS = 3;
    /** check-harness: too few of the harness's requests matched the truth to judge. */
    static final int HARNESS_INCONCLUSIVE = 4;
    /** What the JVM exits with on SIGINT (128 + 2); every command's shutdown hook lets it stand. */
    static final int INTERRUPTED = 130;

    /** Commands whose result can be flagged invalid, and what makes it so. */
    private static final Map<String, String> JUDGED = Map.of(
            "bench", "run invalid (failures over --max-failure-rate, client send lag, or --validate without ground "
                    + "truth): the reasons are printed and the results still written",
            "sweep", "run invalid (failures over --max-failure-rate, client send lag, or --validate without ground "
                    + "truth): the reasons are printed and the results still written",
            "merge", "a shard's run was flagged invalid, so the merged one is: the shards and their reasons are printed "
                    + "and the merged result still written");

    private ExitCodes() {
    }

    /** Lists the exit codes in the help of {@code cli} and each of its subcommands. */
    static void document(CommandLine cli) {
        cli.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(list(null));
        cli.getSubcommands().forEach((name, sub) -> sub.getCommandSpec().usageMessage()
                .exitCodeListHeading("%nExit codes:%n").exitCodeList(name.equals("check-harness") ? checkHarness()
                        : list(JUDGED.get(name))));
    }

    /** check-harness's own: its verdict is the exit code, so a CI job can fail on a harness's findings. */
    static Map<String, String> checkHarness() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Integer.toString(OK), "clean: at least 95%% of the harness's requests matched the truth, surely paired, and "
                + "nothing was found");
        m.put(Integer.toString(BUG), "internal error (a bug: the stack trace is printed)");
        m.put(Integer.toString(BAD_INPUT), "bad flag or file: one line on stderr names it and why");
        m.put(Integer.toString(HARNESS_FINDINGS), "findings: the harness measured something other than what the server "
                + "did (each finding is printed with its evidence and cause)");
        m.put(Integer.toString(HARNESS_INCONCLUSIVE), "inconclusive: under 95%% of the harness's requests matched "
                + "the truth, or matched but under 95%% surely paired with nothing found from the matched rows alone; "
                + "the diagnosis is printed (a clock started late or early, another time unit, a truth log of another "
                + "run, dropped requests, requests too alike to pair: weak_evidence)");
        m.put(Integer.toString(INTERRUPTED), "interrupted (Ctrl-C)");
        return m;
    }

    /** The exit codes of a command; {@code invalid}: what exit code 3 means for it, null where it has none. */
    static Map<String, String> list(String invalid) {
        boolean judged = invalid != null;
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Integer.toString(OK), "success" + (judged ? ", and the run is valid" : ""));
        m.put(Integer.toString(BUG), "internal error (a bug: the stack trace is printed)");
        m.put(Integer.toString(BAD_INPUT), "bad flag, file or endpoint: one line on stderr names it and why");
        if (judged) {
            m.put(Integer.toString(INVALID_RUN), invalid);
        }
        m.put(Integer.toString(INTERRUPTED), "interrupted (Ctrl-C)" + (judged ? ": what was measured is written first" : ""));
        return m;
    }
}
