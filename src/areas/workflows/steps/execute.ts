import type { StepDef, StepType } from '../definition.ts';
import { runCode } from './code.ts';
import { type StepCtx, StepError, type StepResult } from './context.ts';
import { runHttp } from './http.ts';
import { runAudio, runImage, runLlm, runVideo } from './llm.ts';
import { runLoop } from './loop.ts';
import { runCondition, runTransform } from './transform.ts';

// One step of a run, by type.

const byType: Record<Exclude<StepType, 'loop'>, (c: StepCtx, s: StepDef) => Promise<StepResult>> = {
  llm: runLlm,
  image: runImage,
  audio: runAudio,
  video: runVideo,
  code: runCode,
  http: runHttp,
  transform: runTransform,
  condition: runCondition,
  // The scheduler parks a wait step in workflow_waits; no worker ever claims one (waits/begin.ts).
  wait: async () => {
    throw new StepError('A wait step is resumed by its wait, not run by a worker.');
  },
};

export function executeStep(c: StepCtx, s: StepDef): Promise<StepResult> {
  if (s.type === 'loop') return runLoop(c, s, executeStep);
  return byType[s.type as Exclude<StepType, 'loop'>](c, s);
}
