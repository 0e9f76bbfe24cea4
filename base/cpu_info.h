// What the machine offers this process: the number of physical cores, the tools' default thread
// count (as llama.cpp's cpu_get_num_physical_cores: SMT siblings share a core's execution units,
// so a second thread per core makes the bandwidth-bound decode no faster and the compute-bound
// prefill slower).
#ifndef CORTIQ_BASE_CPU_INFO_H_
#define CORTIQ_BASE_CPU_INFO_H_

namespace cortiq {

// Physical cores among the CPUs this process may run on (sched_getaffinity): the distinct
// (physical_package_id, core_id) pairs of /sys/devices/system/cpu/cpuN/topology. Falls back to the
// number of usable CPUs when the topology is not readable (containers without /sys), and is at
// least 1.
int PhysicalCoreCount();

}  // namespace cortiq

#endif  // CORTIQ_BASE_CPU_INFO_H_
