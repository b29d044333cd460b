/**
 * The {@code infersim} command (picocli): {@link dev.infersim.cli.Main} and one class per subcommand (simulate,
 * predict, serve, bench, sweep, compare, merge, demo, profile, calibrate, autoscale), with the flag groups they share
 * in {@link dev.infersim.cli.options} ({@link dev.infersim.cli.options.WorkloadOptions},
 * {@link dev.infersim.cli.options.DeploymentOptions}, {@link dev.infersim.cli.options.ClientOptions}); the demo's
 * analysis is the demo module's ({@link dev.infersim.demo.Demo}). A bad flag or file exits non-zero with one line
 * naming it.
 */
package dev.infersim.cli;
