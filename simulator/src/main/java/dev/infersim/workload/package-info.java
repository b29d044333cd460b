/** infersim workload. */
package dev.infersim.workload;
