/** What an answer says of itself, for traces: the model that generated it and why each choice ended (raw values). */
export interface AnswerFacts {
  model: string | null;
  finishReasons: readonly string[];
}

export const NO_ANSWER_FACTS: AnswerFacts = { model: null, finishReasons: [] };
