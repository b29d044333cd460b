/**
 * The {@code infersim} command (picocli): {@link dev.infersim.cli.Main} and one class per subcommand (simulate,
 * predict, serve, bench, sweep, compare, merge, demo, profile, calibrate, autoscale), with the flag groups they share
 * ({@link dev.infersim.cli.WorkloadOptions}, {@link dev.infersim.cli.DeploymentOptions},
 * {@link dev.infersim.cli.ClientOptions}). A bad flag or file exits non-zero with one line naming it.
 */
package dev.infersim.cli;
