// A deterministic corpus of agent memories for bench/memory.ts: template sentences over a broad
// vocabulary (people, preferences, events, procedures), so vectors come from realistic text through the
// local embedder rather than random noise.

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const W = {
  name: 'Alice Bob Carmen Dmitri Elena Farid Grace Hiro Ines Jonas Kemal Lena Marco Nadia Omar Priya Quentin Rosa Sven Tariq Uma Viktor Wen Xavier Yara Zoe Amara Bruno Chloe Diego'.split(
    ' ',
  ),
  food: 'sushi pizza ramen tacos curry falafel paella dumplings pho risotto burritos salads pancakes croissants bagels kebabs noodles steak oysters tofu'.split(
    ' ',
  ),
  drink:
    'espresso green-tea oat-latte sparkling-water chai matcha cold-brew lemonade kombucha hot-chocolate'.split(
      ' ',
    ),
  topic:
    'invoices shipping refunds onboarding payroll inventory taxes contracts marketing hiring security backups analytics pricing support billing compliance logistics budgeting forecasting'.split(
      ' ',
    ),
  tool: 'spreadsheet CRM calendar slack email dashboard notebook whiteboard ticketing wiki terminal phone'.split(
    ' ',
  ),
  place:
    'Berlin Lisbon Tokyo Toronto Nairobi Madrid Oslo Seoul Lima Dublin Austin Lyon Porto Krakow Cairo Denver Milan Sydney Hanoi Quito'.split(
      ' ',
    ),
  day: 'Monday Tuesday Wednesday Thursday Friday Saturday Sunday'.split(' '),
  time: 'early morning|late morning|lunchtime|mid afternoon|late afternoon|the evening|night'.split('|'),
  hobby:
    'cycling climbing chess gardening photography running sailing painting pottery yoga baking knitting hiking swimming surfing'.split(
      ' ',
    ),
  color: 'dark mode|light mode|high contrast|large fonts|compact layout|a blue theme|a green theme'.split(
    '|',
  ),
  adj: 'urgent quarterly weekly monthly annual delayed pending approved rejected disputed'.split(' '),
  company: 'Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Tyrell Cyberdyne Soylent Vandelay'.split(
    ' ',
  ),
};

const TEMPLATES: ((p: <K extends keyof typeof W>(k: K) => string) => string)[] = [
  (p) => `${p('name')} prefers ${p('food')} for lunch and usually drinks ${p('drink')}.`,
  (p) => `${p('name')} asked about ${p('adj')} ${p('topic')} for ${p('company')} on ${p('day')}.`,
  (p) =>
    `Meeting with ${p('name')} from ${p('company')} is scheduled in ${p('place')} on ${p('day')} ${p('time')}.`,
  (p) => `${p('name')} likes ${p('hobby')} and spends weekends in ${p('place')}.`,
  (p) =>
    `To handle ${p('adj')} ${p('topic')}, open the ${p('tool')}, filter by ${p('company')} and notify ${p('name')}.`,
  (p) => `${p('name')} wants the dashboard in ${p('color')} and reports in the ${p('tool')}.`,
  (p) => `${p('company')} moved its ${p('topic')} team to ${p('place')} after the ${p('adj')} review.`,
  (p) => `${p('name')} is allergic to ${p('food')} and avoids ${p('drink')} after ${p('time')}.`,
  (p) => `Remind ${p('name')} every ${p('day')} ${p('time')} to check ${p('adj')} ${p('topic')}.`,
  (p) => `${p('name')} complained that ${p('topic')} at ${p('company')} were ${p('adj')} again.`,
  (p) => `${p('name')} travels from ${p('place')} to ${p('place')} for ${p('hobby')} trips.`,
  (p) => `The ${p('tool')} export for ${p('company')} ${p('topic')} runs on ${p('day')} ${p('time')}.`,
];

export function memoryText(r: () => number): string {
  const pick = <K extends keyof typeof W>(k: K) => W[k][Math.floor(r() * W[k].length)]!;
  return TEMPLATES[Math.floor(r() * TEMPLATES.length)]!(pick);
}

export type Labelled = { fact: string; query: string };

/** Facts and paraphrased questions about them (different wording, some shared words). */
export const LABELLED: Labelled[] = [
  { fact: 'Maya is vegetarian and never eats meat or fish.', query: 'Does Maya eat meat?' },
  {
    fact: 'The office wifi password is rotated on the first day of every month.',
    query: 'how often does the wifi password change',
  },
  {
    fact: 'Tom prefers to be contacted by text message rather than phone calls.',
    query: "What's the best way to reach Tom?",
  },
  {
    fact: 'Our refund policy allows returns within 30 days with a receipt.',
    query: 'How many days do customers have to return an item?',
  },
  { fact: 'The user has two cats named Pixel and Byte.', query: 'what are the names of my pets' },
  {
    fact: 'Invoices must be approved by the finance lead before payment.',
    query: 'who needs to sign off on invoices before we pay them',
  },
  {
    fact: 'Sara is learning Japanese and practices every evening.',
    query: 'Which language is Sara studying?',
  },
  {
    fact: 'The production database is backed up every night at 2am UTC.',
    query: 'when do the nightly database backups run',
  },
  { fact: 'Leo is allergic to peanuts.', query: 'Does Leo have any food allergies?' },
  {
    fact: 'The customer prefers invoices sent as PDF attachments.',
    query: 'what format should the invoices be in',
  },
  { fact: 'Deploys are frozen on Fridays after 3pm.', query: 'can we ship a release on friday afternoon' },
  { fact: 'Anna lives in Lisbon and works remotely for the company.', query: 'Where is Anna based?' },
  {
    fact: 'The support team answers tickets within four business hours.',
    query: 'what is our response time for support tickets',
  },
  { fact: 'Jonas drinks his coffee black without sugar.', query: 'How does Jonas take his coffee?' },
  {
    fact: 'The quarterly board meeting happens in the second week of March, June, September and December.',
    query: 'When is the next board meeting held each quarter?',
  },
  {
    fact: 'The user wants the app in dark mode with large fonts.',
    query: 'which display theme does the user like',
  },
  {
    fact: 'Shipping to Canada takes five to seven business days.',
    query: 'how long does delivery to Canada take',
  },
  {
    fact: 'Priya manages the marketing budget for the European region.',
    query: 'Who is responsible for marketing spend in Europe?',
  },
  {
    fact: 'To reset a password, open settings, choose security and click reset.',
    query: 'steps for resetting my password',
  },
  {
    fact: 'The warehouse in Rotterdam closes at 6pm on weekdays.',
    query: 'What time does the Rotterdam warehouse shut?',
  },
  {
    fact: 'Marco is training for the Berlin marathon in September.',
    query: 'what race is Marco preparing for',
  },
  {
    fact: 'The API rate limit is 100 requests per minute per key.',
    query: 'how many API calls per minute are allowed',
  },
  { fact: "The user's birthday is on the 14th of July.", query: 'When was I born?' },
  { fact: 'Payroll is processed on the 25th of each month.', query: 'what day do salaries get paid' },
  { fact: 'Elena speaks Spanish, English and German fluently.', query: 'Which languages does Elena speak?' },
  {
    fact: 'The client hates long email threads and wants weekly summary calls.',
    query: 'how does the client like to receive updates',
  },
  {
    fact: 'Our main competitor lowered their prices by 10 percent last quarter.',
    query: 'did the competition change its pricing',
  },
  {
    fact: 'The user is a night owl and usually works after 10pm.',
    query: 'at what time of day does the user work',
  },
  {
    fact: 'Contracts above 50000 euros need legal review.',
    query: 'which contracts must go through the legal team',
  },
  { fact: 'Omar plays guitar in a jazz band on weekends.', query: 'What music does Omar play?' },
  { fact: 'The test environment is reset every Sunday night.', query: 'when is staging wiped' },
  {
    fact: 'Customers in Germany must receive invoices that include VAT numbers.',
    query: 'what do German invoices need to contain',
  },
  { fact: 'Nadia is on parental leave until the end of April.', query: 'When will Nadia be back at work?' },
  {
    fact: 'The user drives an electric car and charges it at home.',
    query: 'what kind of vehicle do I have',
  },
  {
    fact: 'Onboarding new employees takes two weeks including security training.',
    query: 'how long is the onboarding process for new hires',
  },
  {
    fact: 'The CEO prefers short bullet-point reports over long documents.',
    query: 'how should reports for the chief executive be written',
  },
  { fact: 'Hiro moved from Osaka to Toronto last year.', query: 'Where did Hiro relocate?' },
  {
    fact: 'Our logo must always appear on a white background.',
    query: 'what are the rules for using the brand logo',
  },
  { fact: 'The user is afraid of flying and prefers trains.', query: 'how does the user like to travel' },
  { fact: 'Refunds above 500 dollars need manager approval.', query: 'who approves large refunds' },
];
