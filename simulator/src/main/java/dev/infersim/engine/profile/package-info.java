/**
 * The facts of the hardware and the model an engine serves: {@link dev.infersim.engine.profile.GpuProfile} (datasheet
 * peaks and the efficiency factors that turn the roofline bound into measured step times),
 * {@link dev.infersim.engine.profile.ModelProfile} (the architecture's shapes, its
 * {@link dev.infersim.engine.profile.VisionEncoder}), the {@link dev.infersim.engine.profile.Precision} of weights and KV
 * cache. Records the engine reads and nothing else; uses only {@link dev.infersim.common}. The catalog that loads them
 * from configs/ is {@link dev.infersim.engine.Profiles}.
 */
package dev.infersim.engine.profile;
