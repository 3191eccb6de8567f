// The labelled data of bench/memory-quality.ts, generated deterministically (no dataset can be downloaded
// here): long multi-session chats between two people stored one turn per memory, as an assistant that
// remembers conversations would store them, with questions and the turns that answer them; and a set of
// short factual notes with paraphrased questions (those in memory-quality-notes.ts).
//
// What makes it realistic rather than easy: most turns are chit-chat sharing the speakers' names and the
// commonest words ("did", "what", "wow"); the same life events happen to people in other conversations;
// an event is often told as an answer to the other person's question, so the answering turn does not
// repeat the event's name; and questions are phrased in their own words (LoCoMo-style kinds: single-hop,
// multi-hop, temporal, open-domain).
import { rng } from './memory-corpus.ts';

export type Turn = { conv: number; session: number; date: string; speaker: string; text: string };
export type Kind = 'single-hop' | 'multi-hop' | 'temporal' | 'open-domain';
export type Question = { conv: number; kind: Kind; question: string; evidence: number[] };

// A life event: `say` introduces it (mentions it by name), `ask` is the friend asking how it went,
// `answer` the reply (the answer, in other words), `later` an update sessions later. `q*` are questions.
type Event = {
  say: string;
  ask: string;
  answer: string;
  later: string;
  /** Said by the friend on another day: the same words, not the answer. */
  distract: string;
  qWhat: string; // single-hop, answered by `answer`
  qWhen: string; // temporal, answered by `say`
  qSoFar: string; // multi-hop, answered by `say` + `later`
  qWould: string; // open-domain, answered by `say` + `answer`
};

const EVENTS: Event[] = [
  {
    say: 'I went to the adoption agency meeting yesterday, the one I told you about.',
    ask: 'So how did the adoption meeting go?',
    answer: 'Really well! They explained the home study and said the paperwork takes about six months.',
    later: 'Big news: we passed the home study, so the agency can start matching us with a child.',
    distract: 'My cousin keeps asking me about adoption agencies, I told her the meeting is where to start.',
    qWhat: 'How long did {P} learn the adoption paperwork would take?',
    qWhen: 'When did {P} attend the adoption agency meeting?',
    qSoFar: 'What steps has {P} taken toward adopting a child?',
    qWould: 'Is {P} likely to become a parent soon?',
  },
  {
    say: 'I finally signed up for that pottery class downtown.',
    ask: 'How was your first pottery class?',
    answer: 'Messy but fun, I made a lopsided bowl and the teacher said my centering was decent.',
    later: 'My glazed mugs came out of the kiln today, they are actually usable!',
    distract: 'There is a pottery place near my office but the class times never work for me.',
    qWhat: 'What did {P} make in the first ceramics lesson?',
    qWhen: 'When did {P} sign up for the pottery class?',
    qSoFar: 'What has {P} made since starting pottery?',
    qWould: 'Would {P} appreciate a handmade ceramics gift?',
  },
  {
    say: 'We adopted a rescue dog from the shelter this weekend, her name is Biscuit.',
    ask: 'How is Biscuit settling in?',
    answer: 'She chewed one of my shoes but she sleeps at the foot of the bed now, so sweet.',
    later: 'Biscuit graduated from obedience school today, she can finally sit and stay.',
    distract: "My neighbour's dog got out of the shelter fence again this weekend.",
    qWhat: 'What did the new puppy damage at home?',
    qWhen: 'When did {P} get the rescue dog?',
    qSoFar: 'What has happened with {P} and the shelter dog?',
    qWould: 'Would {P} enjoy a pet-friendly vacation?',
  },
  {
    say: 'I ran my first half marathon on Sunday!',
    ask: 'How did the half marathon go? Did you hit your goal time?',
    answer: 'I finished in two hours and five minutes, my knees hated the last three miles.',
    later: 'I registered for the full marathon in the spring, training starts next week.',
    distract: 'I watched the marathon on TV, I could never run that far.',
    qWhat: 'What was the finishing time of {P} in the race?',
    qWhen: 'When did {P} run the half marathon?',
    qSoFar: 'What running races has {P} done or planned?',
    qWould: 'Would {P} be interested in joining a running club?',
  },
  {
    say: 'I had the job interview at the architecture firm this morning.',
    ask: 'How did the interview at the firm go?',
    answer: 'They asked me to sketch a library floor plan on the spot, I think I nailed it.',
    later: 'I got the offer from the architecture firm, I start as a junior designer next month!',
    distract: 'We had a long meeting at the firm about the new office interview process.',
    qWhat: 'What task was {P} given during the interview?',
    qWhen: 'When was the job interview of {P} at the architecture firm?',
    qSoFar: 'How did the job search of {P} with the architecture firm turn out?',
    qWould: 'Does {P} likely have a background in design?',
  },
  {
    say: 'I went to the LGBTQ support group again last night.',
    ask: 'What was the support group like this time?',
    answer: 'A transgender woman shared her story and it made me feel so much less alone.',
    later: 'I volunteered to help organise the pride fundraiser for the support group.',
    distract: 'A friend of mine runs a support group for new parents, she says it helps.',
    qWhat: 'Whose story moved {P} at the group meeting?',
    qWhen: 'When did {P} go to the LGBTQ support group?',
    qSoFar: 'How has {P} been involved with the support group?',
    qWould: 'Would {P} be considered a member of the LGBTQ community?',
  },
  {
    say: 'We took the kids camping by the lake over the long weekend.',
    ask: 'Was the camping trip fun for the kids?',
    answer: 'They loved roasting marshmallows, and we saw a meteor shower at night.',
    later: 'The kids keep asking when we can go back to the lake, we booked the same campsite for August.',
    distract: 'The lake was too cold for camping when we drove past it last weekend.',
    qWhat: 'What did the family see at night on the trip?',
    qWhen: 'When did {P} go camping with the kids?',
    qSoFar: 'What outdoor trips has {P} taken or booked with the family?',
    qWould: 'Would {P} enjoy a national park holiday?',
  },
  {
    say: 'I started volunteering at the community garden on Saturdays.',
    ask: 'What do they have you doing at the garden?',
    answer: 'Mostly weeding and planting tomatoes, and I am learning about composting.',
    later: 'The tomatoes from our plot won second prize at the county fair!',
    distract: 'Our street is talking about starting a community garden but nobody wants to organise it.',
    qWhat: 'What vegetables does {P} plant as a volunteer?',
    qWhen: 'When did {P} start volunteering at the community garden?',
    qSoFar: 'What has {P} done at the community garden so far?',
    qWould: 'Would {P} like a book about growing vegetables?',
  },
  {
    say: 'My grandmother moved into a care home this week.',
    ask: 'How is your grandma adjusting to the new place?',
    answer: 'She complains about the food but she joined the bingo night and made a friend.',
    later: 'Grandma turned ninety today, we threw a small party for her at the care home.',
    distract: 'My aunt is looking at care homes for my great uncle, it is a tough choice.',
    qWhat: 'What activity did the grandmother of {P} join?',
    qWhen: 'When did the grandmother of {P} move into the care home?',
    qSoFar: 'What has happened with the grandmother of {P}?',
    qWould: 'Does {P} have older relatives who need care?',
  },
  {
    say: 'I bought my first guitar, an old acoustic from a pawn shop.',
    ask: 'Have you learned any songs on the guitar yet?',
    answer: 'Just three chords so far, but I can play a rough version of Wonderwall.',
    later: 'I played guitar at an open mic night, my hands were shaking the whole time.',
    distract: 'My roommate plays guitar at night and it drives me crazy.',
    qWhat: 'Which song can {P} play?',
    qWhen: 'When did {P} buy the acoustic guitar?',
    qSoFar: 'How has the music of {P} progressed?',
    qWould: 'Would {P} enjoy going to a live concert?',
  },
  {
    say: 'We finally closed on the new house, the one with the big porch.',
    ask: 'Congrats! What is the first thing you want to do in the house?',
    answer: 'Paint the nursery yellow and plant a lemon tree in the backyard.',
    later: 'Moving day was chaos, the truck was four hours late but we are in.',
    distract: 'Houses near the lake cost a fortune, we looked at one with a porch online.',
    qWhat: 'What colour will {P} paint the nursery?',
    qWhen: 'When did {P} close on the house?',
    qSoFar: 'What has happened with the home purchase of {P}?',
    qWould: 'Is {P} expecting a baby?',
  },
  {
    say: 'I read the book you recommended, the one about the lighthouse keeper.',
    ask: 'Did you like the ending of the lighthouse book?',
    answer: 'I cried, the letter from his daughter at the end got me completely.',
    later: 'I started a book club at work and we picked the lighthouse novel first.',
    distract: 'Have you read any good books lately? I need something for the beach.',
    qWhat: 'What part of the novel made {P} cry?',
    qWhen: 'When did {P} finish the lighthouse book?',
    qSoFar: 'What has {P} done since reading the lighthouse novel?',
    qWould: 'Would {P} like a gift card for a bookstore?',
  },
  {
    say: 'I got my scuba diving certification in Mexico.',
    ask: 'What was the coolest thing you saw diving?',
    answer: 'A sea turtle swam right next to me for a whole minute, unreal.',
    later: 'I am planning a diving trip to the Great Barrier Reef next year.',
    distract: 'My boss went diving in Mexico and would not stop talking about it.',
    qWhat: 'Which animal swam beside {P} underwater?',
    qWhen: 'When did {P} get certified for scuba diving?',
    qSoFar: 'What diving has {P} done or planned?',
    qWould: 'Would {P} enjoy an aquarium visit?',
  },
  {
    say: 'I had surgery on my shoulder on Tuesday, nothing serious.',
    ask: 'How is the recovery going after the operation?',
    answer: 'Physical therapy twice a week, I can lift my arm above my head again.',
    later: 'The doctor cleared me to swim again, the shoulder feels almost normal.',
    distract: 'My dad had knee surgery last year, the recovery took ages.',
    qWhat: 'How often does {P} go to physical therapy?',
    qWhen: 'When did {P} have shoulder surgery?',
    qSoFar: 'How has the shoulder recovery of {P} gone?',
    qWould: 'Should {P} avoid heavy lifting for a while?',
  },
  {
    say: 'I entered my painting of the sunset in the local art show.',
    ask: 'Did anyone buy your sunset painting at the show?',
    answer: 'A retired teacher bought it for two hundred dollars and asked for another one.',
    later: 'The gallery on Main Street asked me to exhibit five paintings in the fall.',
    distract: 'The art show downtown had so many sunset paintings this year.',
    qWhat: 'Who bought the artwork of {P}?',
    qWhen: 'When did {P} enter the art show?',
    qSoFar: 'What has come of the painting of {P}?',
    qWould: 'Would {P} be interested in an art workshop?',
  },
  {
    say: 'My brother is getting married in Portugal and I am giving the speech.',
    ask: 'Have you written your wedding speech yet?',
    answer: 'Half of it, I want to tell the story of him falling off the canoe at summer camp.',
    later: 'The wedding in Lisbon was beautiful and everyone laughed at the canoe story.',
    distract: 'We went to a wedding last summer where the speech went on for an hour.',
    qWhat: 'Which childhood story will {P} tell in the toast?',
    qWhen: 'When did {P} learn about the wedding in Portugal?',
    qSoFar: 'What has {P} done for the wedding of the brother?',
    qWould: 'Is {P} comfortable with public speaking?',
  },
  {
    say: 'I switched to a vegetarian diet last month.',
    ask: 'Do you miss meat at all?',
    answer: 'Only bacon, honestly, but lentil stews have become my favourite dinner.',
    later: 'I have been meat-free for six months now and my cholesterol went down.',
    distract: 'I tried a vegetarian burger at lunch, not bad at all.',
    qWhat: 'What dish has become the favourite dinner of {P}?',
    qWhen: 'When did {P} become vegetarian?',
    qSoFar: 'How has the meat-free eating of {P} worked out?',
    qWould: 'Would {P} order a steak at a restaurant?',
  },
  {
    say: 'I started learning Japanese with an app before the Tokyo trip.',
    ask: 'Can you say anything in Japanese yet?',
    answer: 'I can order ramen and ask where the train station is, that is about it.',
    later: 'In Tokyo I managed a whole conversation with a shopkeeper, she was so patient.',
    distract: 'My colleague is moving to Tokyo and learning Japanese at night.',
    qWhat: 'What can {P} order in the new language?',
    qWhen: 'When did {P} start learning Japanese?',
    qSoFar: 'How has the language learning of {P} gone?',
    qWould: 'Would {P} enjoy a Japanese restaurant?',
  },
];

const CHITCHAT = [
  'Hey {O}! How have you been?',
  'Wow, that is amazing, {O}!',
  'Did you have a good week?',
  'Haha, totally.',
  'What did you do this weekend?',
  'That sounds like so much fun!',
  'I am so proud of you, {O}.',
  'Thanks, {O}, that means a lot.',
  'Same here, just busy with work.',
  'Oh no, I am sorry to hear that.',
  'Did you see the game last night?',
  'What are you up to today?',
  'Talk soon, take care!',
  'Wow, what a week it has been.',
  'I know right? Crazy.',
  'Did you get my message earlier?',
  'Nothing much, just relaxing at home.',
  'That is so sweet of you to say.',
  'Good luck, {O}! Let me know how it goes.',
  'What a lovely surprise!',
  'I did not expect that at all!',
  'Work has been hectic, what about you?',
  'Yes! We should catch up properly soon.',
  'I have been meaning to ask you about that.',
];

// Chit-chat is composed (opener + line + tail) so that, as in real chats, the same turn seldom repeats
// word for word (storing folds exact duplicates into one memory).
const OPENER = [
  '',
  'Haha, ',
  'Oh wow, ',
  'Hey {O}, ',
  'Honestly, ',
  'Aw, ',
  'Ugh, ',
  'Yes! ',
  'Hmm, ',
  'Oh, ',
  'Ha, ',
  'Well, ',
];
const TAIL = [
  '',
  ' Anyway.',
  ' Talk later?',
  ' :)',
  ' Miss you!',
  ' Crazy week.',
  ' How about you?',
  ' So tired today.',
  ' Coffee soon?',
  ' It rained all day here.',
  ' The kids say hi.',
  ' Work is nuts.',
];

const NAMES = [
  'Caroline Melanie',
  'Jon Gina',
  'Audrey Andrew',
  'James John',
  'Deborah Jolene',
  'Evan Sam',
  'Calvin Dave',
  'Maria Joanna',
  'Nate Tim',
  'Priya Leo',
];

const SESSIONS = 28;
const TURNS_PER_SESSION = 21;
const EVENTS_PER_CONV = 14;

function isoDate(day: number): string {
  return new Date(Date.UTC(2023, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
}

/**
 * `nConv` conversations of 28 sessions × 21 turns (588 turns each); each person lives 7 events drawn
 * from the shared catalogue (so other conversations tell the same kinds of stories), told in session
 * order: `say`, the friend's `ask` one to three turns later, the `answer` right after, `later` in a
 * session at least five sessions on.
 */
export function conversations(nConv: number): { turns: Turn[]; questions: Question[] } {
  const r = rng(2024);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const turns: Turn[] = [];
  const questions: Question[] = [];
  for (let c = 0; c < nConv; c++) {
    const people = NAMES[c % NAMES.length]!.split(' ') as [string, string];
    const order = EVENTS.map((_, i) => i).sort(() => r() - 0.5);
    // Each person's events: [event index, session told, session of the update]
    const plans: { who: 0 | 1; ev: number; at: number; later: number; distract: number }[] = [];
    for (let k = 0; k < EVENTS_PER_CONV; k++) {
      const at = 1 + Math.floor(r() * (SESSIONS - 8));
      plans.push({
        who: (k % 2) as 0 | 1,
        ev: order[k]!,
        at,
        later: at + 5 + Math.floor(r() * 3),
        distract: Math.floor(r() * SESSIONS),
      });
    }
    let day = Math.floor(r() * 30);
    const where = new Map<string, number>(); // `${plan}:${part}` → index in `turns`
    for (let s = 0; s < SESSIONS; s++) {
      day += 2 + Math.floor(r() * 8);
      const slots: (string | null)[] = Array.from({ length: TURNS_PER_SESSION }, () => null);
      const local = new Map<string, number>();
      const place = (text: string, who: number, from: number, key: string): number => {
        let i = from;
        while (i < TURNS_PER_SESSION && (slots[i] !== null || i % 2 !== who)) i++;
        if (i >= TURNS_PER_SESSION) return -1;
        slots[i] = text;
        local.set(key, i);
        return i;
      };
      plans.forEach((p, pi) => {
        const ev = EVENTS[p.ev]!;
        if (p.at === s) {
          const i = place(ev.say, p.who, 2 + Math.floor(r() * 8), `${pi}:say`);
          if (i < 0) return;
          const j = place(ev.ask, 1 - p.who, i + 1 + Math.floor(r() * 3), `${pi}:ask`);
          if (j >= 0) place(ev.answer, p.who, j + 1, `${pi}:answer`);
        }
        if (p.later === s) place(ev.later, p.who, 3 + Math.floor(r() * 12), `${pi}:later`);
        if (p.distract === s) place(ev.distract, 1 - p.who, 1 + Math.floor(r() * 15), `${pi}:distract`);
      });
      const base = turns.length;
      for (let i = 0; i < TURNS_PER_SESSION; i++) {
        const who = i % 2;
        const text =
          slots[i] ?? `${pick(OPENER)}${pick(CHITCHAT)}${pick(TAIL)}`.replaceAll('{O}', people[1 - who]!);
        turns.push({ conv: c, session: s, date: isoDate(day), speaker: people[who]!, text });
      }
      for (const [key, i] of local) where.set(key, base + i);
    }
    plans.forEach((p, pi) => {
      const ev = EVENTS[p.ev]!;
      const P = people[p.who]!;
      const at = (part: string) => where.get(`${pi}:${part}`);
      const add = (kind: Kind, q: string, parts: string[]) => {
        const evidence = parts.map(at).filter((x): x is number => x !== undefined);
        if (evidence.length === parts.length)
          questions.push({ conv: c, kind, question: q.replace('{P}', P), evidence });
      };
      add('single-hop', ev.qWhat, ['answer']);
      add('temporal', ev.qWhen, ['say']);
      add('multi-hop', ev.qSoFar, ['say', 'later']);
      add('open-domain', ev.qWould, ['say', 'answer']);
    });
  }
  return { turns, questions };
}
