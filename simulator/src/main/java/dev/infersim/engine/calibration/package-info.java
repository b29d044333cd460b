/**
 * Fits a GPU profile's efficiency tables from measured step times ({@link dev.infersim.engine.calibration.Calibrator},
 * {@code infersim calibrate}) and reads the measurement files (bench/calibration) it is fitted to
 * ({@link dev.infersim.engine.calibration.MeasurementFile}). Uses the engine's roofline model and profiles; nothing in
 * the engine uses it.
 */
package dev.infersim.engine.calibration;
