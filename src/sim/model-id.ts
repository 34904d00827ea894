/** The model id the simulator serves by default; its own file so `sim --help` and `demo` name it without loading the server. */
export const SIM_MODEL = 'llmbench-sim'
