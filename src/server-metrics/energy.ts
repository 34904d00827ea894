import type { ServerLevelFigures } from './level-figures.js'

/**
 * GPU energy per output token over a level, joules: the GPUs' mean power inside the measured window
 * times its length, over the tokens the client received in it. The energy counter (DCGM's
 * total_energy_consumption) is used only without a power gauge: its increase is over the window
 * already (windowIncrease). Null without GPU figures or output.
 */
export function joulesPerOutputToken(
  server: Pick<ServerLevelFigures, 'gpu_power_watts' | 'gpu_energy_joules'>,
  outputTokens: number,
  durationS: number,
): number | null {
  if (outputTokens <= 0 || durationS <= 0) return null
  let joules: number | null = null
  if (server.gpu_power_watts !== null) joules = server.gpu_power_watts.mean * durationS
  else if (server.gpu_energy_joules !== null) joules = server.gpu_energy_joules
  return joules === null ? null : Math.round((joules / outputTokens) * 1e4) / 1e4
}
