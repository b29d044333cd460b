package dev.infersim.cli;

import dev.infersim.bench.measure.TerminalText;
import dev.infersim.cli.options.BundledNames;
import dev.infersim.cli.options.GroupedHelp;
import dev.infersim.cli.options.OptionLimits;
import dev.infersim.common.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.List;

/**
 * The {@code infersim} command. Every user error ends as one line on stderr and exit code 2; a bug ends with its
 * stack trace and exit code 1 ({@link ExitCodes} lists them all, in every command's help).
 */
@Command(name = "infersim", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "LLM serving lab: simulate, serve, benchmark and predict LLM inference without GPUs.",
        subcommands = {
                ProfileCommand.class,
                SimulateCommand.class,
                AutoscaleCommand.class,
                BenchCommand.class,
                SweepCommand.class,
                CompareCommand.class,
                CheckHarnessCommand.class,
                MergeCommand.class,
                ServeCommand.class,
                CalibrateCommand.class,
                PredictCommand.class,
                DemoCommand.class,
                CommandLine.HelpCommand.class,
        })
public final class Main implements Runnable {

    public static void main(String[] args) {
        EarlyInterrupt.install();
        int code;
        try {
            code = run(args);
        } finally {
            EarlyInterrupt.handOver(); // ended, normally or with a bug's stack trace: no interrupt to report
        }
        System.exit(code);
    }

    /** Runs the command line and returns its exit code, without exiting (for tests). */
    public static int run(String... args) {
        BundledNames.publish();
        CommandLine cli = new CommandLine(new Main());
        ExitCodes.document(cli);
        // every sub-command's -V prints the version too (picocli gives each its own, empty, provider)
        Version version = new Version();
        cli.getSubcommands().values().forEach(sub -> sub.getCommandSpec().versionProvider(version));
        GroupedHelp.install(cli);
        OptionLimits.register(cli);
        cli.setExecutionStrategy(parsed -> {
            OptionLimits.check(parsed);
            return new CommandLine.RunLast().execute(parsed);
        });
        cli.setExecutionExceptionHandler(Main::handleExecutionException);
        cli.setParameterExceptionHandler(Main::handleParameterException);
        return cli.execute(args);
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    private static int handleParameterException(CommandLine.ParameterException e, String[] args) {
        PrintWriter err = e.getCommandLine().getErr();
        err.println("infersim: " + oneLine(e.getMessage()) + suggestion(e));
        err.flush();
        return ExitCodes.BAD_INPUT;
    }

    private static int handleExecutionException(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
        Throwable cause = e;
        while (!(cause instanceof ConfigException) && cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        if (cause instanceof ConfigException || e instanceof CommandLine.ParameterException) {
            cli.getErr().println("infersim: " + oneLine(cause.getMessage()));
            cli.getErr().flush();
            return ExitCodes.BAD_INPUT;
        }
        throw new IllegalStateException(e);
    }

    /** picocli's nearest known option or command to a mistyped one, as " (did you mean --x?)", or "". */
    private static String suggestion(CommandLine.ParameterException e) {
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched) {
            List<String> near = unmatched.getSuggestions();
            if (!near.isEmpty()) {
                return " (did you mean " + String.join(" or ", near.subList(0, Math.min(3, near.size()))) + "?)";
            }
        }
        return "";
    }

    /**
     * The message on one line, in our words rather than a library's ({@link JavaWords}), anything in it that could act on
     * a terminal escaped (it may quote a server).
     */
    private static String oneLine(String message) {
        return message == null ? "error" : TerminalText.printable(JavaWords.ours(message.replaceAll("\\s*\\R\\s*", " ").trim()));
    }
}
